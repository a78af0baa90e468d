package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiCore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What HAMi's NVIDIA plugin reads and writes on the host for HAMi-core, through the agent's view of the host
 * ({@link AllocatorConfig#local}): which {@code libvgpu.so} to mount, and each container's cache directory and
 * {@code /tmp/vgpulock}, recreated before the container starts.
 *
 * <p>Not thread-safe: the allocator calls it under its decisions lock.
 */
final class HamiCoreHostFiles {
    private static final Pattern VERSIONED_LIBRARY = Pattern.compile("libvgpu\\.so\\..+");
    /** The allocator's log category, as before this part was split out of it. */
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final AllocatorConfig config;
    /** The last problem preparing the directories, so that a problem repeated each call is logged once. */
    private String lastDirectoryProblem;

    HamiCoreHostFiles(AllocatorConfig config) {
        this.config = requireNonNull(config, "config");
    }

    /**
     * The library file in {@code <hookPath>/vgpu/} on the host: the versioned {@code libvgpu.so.<v>} HAMi's
     * {@code vgpu-init.sh} copied there (the highest, when several are), else {@code libvgpu.so}.
     */
    String libraryFile() {
        Path dir = config.local(config.hamiCore().path("vgpu"));
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> VERSIONED_LIBRARY.matcher(n).matches())
                    .max(Comparator.comparing(HamiCoreHostFiles::versionKey)).orElse("libvgpu.so");
        } catch (IOException e) {
            return "libvgpu.so";
        }
    }

    /** Orders {@code libvgpu.so.v2.9.0} before {@code libvgpu.so.v2.10.0}: numbers compared as numbers. */
    static String versionKey(String name) {
        StringBuilder key = new StringBuilder();
        for (String part : name.split("(?<=\\D)(?=\\d)|(?<=\\d)(?=\\D)")) {
            key.append(part.chars().allMatch(Character::isDigit) ? String.format("%010d", Long.parseLong(part))
                    : part);
        }
        return key.toString();
    }

    /**
     * As HAMi: recreates the container's cache directory (emptied, mode 0777) and {@code /tmp/vgpulock} (0777); a
     * failure is logged (once while it repeats), never thrown: the allocation goes on.
     *
     * @param cacheDirectory the container's cache directory as a host path (AllocatePolicy's)
     */
    void prepare(String cacheDirectory) {
        Path cache = config.local(cacheDirectory);
        Path lock = config.local(HamiCore.LOCK_DIR);
        try {
            deleteTree(cache);
            for (Path dir : List.of(cache, lock)) {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            }
            lastDirectoryProblem = null;
        } catch (IOException | UnsupportedOperationException e) {
            String problem = e.toString();
            if (!problem.equals(lastDirectoryProblem)) {
                lastDirectoryProblem = problem;
                log.warn("cannot prepare HAMi-core's directories {} and {} (as HAMi, the allocation goes on; mount"
                        + " the host's {} and {} into the agent): {}", cache, lock, config.hamiCore().path("vgpu"),
                        HamiCore.LOCK_DIR, problem);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
