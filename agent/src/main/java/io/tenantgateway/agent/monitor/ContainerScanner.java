package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.monitor.policy.CleanupPolicy;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.region.DeviceUsage;
import io.tenantgateway.hami.region.RegionRead;
import io.tenantgateway.hami.region.RegionRejection;
import io.tenantgateway.hami.region.SharedRegion;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One scan of HAMi-core's per-container directories: reads each container's region, matches it to its pod by UID and
 * container name, falls back to the pod's allocation annotation where no region exists yet, and removes the
 * directories of pods that are gone ({@link CleanupPolicy}). Never writes into a region.
 *
 * <p>Threading: {@link #scan} runs on the monitor's one thread; the counters are read from any thread.
 */
final class ContainerScanner implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ContainerScanner.class);
    /** HAMi-core leaves its {@code .cache} and at most a library in a directory: more entries are not looked at. */
    private static final int MAX_ENTRIES_PER_DIRECTORY = 8;
    private static final String CACHE_SUFFIX = ".cache";
    /**
     * The longest a region read may take. A read of a regular file takes microseconds; one that takes longer met a
     * file the container swapped for a FIFO after the regular-file check, whose open blocks until a writer comes.
     */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(2);

    /** Reads one region file ({@link SharedRegion#read(Path)}; tests give a slower one). */
    @FunctionalInterface
    interface RegionSource {
        RegionRead read(Path file) throws IOException;
    }

    private final Path root;
    private final CleanupPolicy cleanup;
    private final int maxContainers;
    private final Map<RegionRejection, AtomicLong> skipped = new EnumMap<>(RegionRejection.class);
    private final AtomicLong unreadable = new AtomicLong();
    private final AtomicLong removed = new AtomicLong();
    private final AtomicLong overLimit = new AtomicLong();
    private final AtomicLong scans = new AtomicLong();
    private final AtomicLong blockedReads = new AtomicLong();
    private final RegionSource source;
    private final Duration readTimeout;
    /** Directories whose read blocked once: never read again (their pod is hostile or broken). */
    private final Set<String> blocked = new HashSet<>();
    private volatile ExecutorService reader;
    private Map<String, Instant> orphanSince = Map.of();

    ContainerScanner(Path root, CleanupPolicy cleanup, int maxContainers) {
        this(root, cleanup, maxContainers, SharedRegion::read, READ_TIMEOUT);
    }

    ContainerScanner(Path root, CleanupPolicy cleanup, int maxContainers, RegionSource source, Duration readTimeout) {
        this.source = requireNonNull(source, "source");
        this.readTimeout = requireNonNull(readTimeout, "readTimeout");
        this.root = requireNonNull(root, "root");
        this.cleanup = requireNonNull(cleanup, "cleanup");
        this.maxContainers = maxContainers;
        for (RegionRejection reason : RegionRejection.values()) {
            skipped.put(reason, new AtomicLong());
        }
    }

    /**
     * Scans once.
     *
     * @param pods this node's pods, as last listed
     * @param podsError why this scan's pod list failed, when it did: nothing is removed then
     */
    MonitorSnapshot scan(List<PodInfo> pods, Optional<String> podsError, Instant now) {
        Map<String, PodInfo> byUid = new HashMap<>();
        for (PodInfo pod : pods) {
            byUid.put(pod.uid(), pod);
        }
        Set<String> directories = directories();
        blocked.retainAll(directories);
        List<ContainerUsage> containers = new ArrayList<>();
        Set<String> withRegion = new HashSet<>();
        for (String directory : directories) {
            Optional<String> uid = CleanupPolicy.podUid(directory);
            PodInfo pod = uid.map(byUid::get).orElse(null);
            if (pod == null || pod.terminal()) {
                continue;
            }
            String container = CleanupPolicy.containerName(directory).orElseThrow();
            if (pod.entryIndex(container) < 0) {
                continue; // HAMi reads spec.containers only
            }
            region(directory).read().ifPresent(read -> {
                containers.add(new ContainerUsage(pod.namespace(), pod.name(), container,
                        ContainerUsage.Source.REGION, read.snapshot().devices().stream()
                                .filter(device -> !device.uuid().isEmpty()).toList(),
                        read.snapshot().lastKernelTime()));
                withRegion.add(pod.uid() + "_" + container);
            });
        }
        for (PodInfo pod : pods) {
            if (!pod.terminal()) {
                annotated(pod, withRegion, containers);
            }
        }
        Optional<Set<String>> live = podsError.isPresent() ? Optional.empty()
                : Optional.of(pods.stream().filter(pod -> !pod.terminal()).map(PodInfo::uid)
                        .collect(Collectors.toSet()));
        CleanupPolicy.Decision decision = cleanup.decide(directories, live, orphanSince, now);
        orphanSince = decision.orphanSince();
        for (String directory : decision.delete()) {
            remove(directory);
        }
        scans.incrementAndGet();
        return new MonitorSnapshot(Optional.of(now), containers, directories.size(), decision.waiting(), podsError);
    }

    /** Scans done since start. */
    long scans() {
        return scans.get();
    }

    /**
     * Regions skipped since start, by reason ({@code unreadable}: the file could not be opened or read;
     * {@code over_limit}: a directory past the scan's limit, not read; {@code blocked}: a read that did not end within
     * {@link #READ_TIMEOUT}, its directory never read again).
     */
    Map<String, Long> skipped() {
        Map<String, Long> out = new HashMap<>();
        skipped.forEach((reason, count) -> out.put(reason.name().toLowerCase(java.util.Locale.ROOT), count.get()));
        out.put("unreadable", unreadable.get());
        out.put("over_limit", overLimit.get());
        out.put("blocked", blockedReads.get());
        return out;
    }

    /** Directories removed since start. */
    long removed() {
        return removed.get();
    }

    private Set<String> directories() {
        try {
            return listDirectories();
        } catch (IOException e) {
            log.atWarn().addKeyValue("dir", root).addKeyValue("err", e.toString())
                    .log("cannot list HAMi-core's container directories");
            return new TreeSet<>();
        }
    }

    /**
     * The container directories under the root, sorted, at most the scan's limit (the rest counted as
     * {@code over_limit}); none when the root does not exist yet (the first Allocate makes it).
     *
     * @throws IOException when the root exists and cannot be listed
     */
    Set<String> listDirectories() throws IOException {
        Set<String> out = new TreeSet<>();
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
            for (Path entry : entries) {
                if (!Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                if (out.size() >= maxContainers) {
                    overLimit.incrementAndGet();
                    continue;
                }
                out.add(entry.getFileName().toString());
            }
        }
        return out;
    }

    /**
     * What a container directory holds: its region, read (the first regular {@code .cache} file that reads as one) or
     * the last one rejected; or why none could be read; both empty when there is no region file yet (no CUDA call).
     */
    record Found(Optional<RegionRead> region, Optional<String> problem) {
        static final Found NONE = new Found(Optional.empty(), Optional.empty());

        /** The region, when one read. */
        Optional<RegionRead> read() {
            return region.filter(RegionRead::isOk);
        }
    }

    /** What the container directory {@code name} holds ({@link Found}); a directory whose read blocked: not read. */
    Found region(String name) {
        if (blocked.contains(name)) {
            return new Found(Optional.empty(), Optional.of("blocked: a read did not end within "
                    + io.tenantgateway.common.time.GoDuration.format(readTimeout) + "; not read again"));
        }
        Path directory = root.resolve(name);
        List<Path> caches = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            int seen = 0;
            for (Path entry : entries) {
                if (++seen > MAX_ENTRIES_PER_DIRECTORY) {
                    break;
                }
                if (entry.getFileName().toString().endsWith(CACHE_SUFFIX)
                        && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)) {
                    caches.add(entry);
                }
            }
        } catch (NoSuchFileException gone) {
            return Found.NONE;
        } catch (IOException e) {
            unreadable.incrementAndGet();
            return new Found(Optional.empty(), Optional.of("unreadable: " + e.getMessage()));
        }
        caches.sort(null);
        Found found = Found.NONE;
        for (Path cache : caches) {
            try {
                RegionRead read = read(cache);
                if (read == null) {
                    blocked.add(name);
                    return region(name);
                }
                if (read.isOk()) {
                    return new Found(Optional.of(read), Optional.empty());
                }
                skipped.get(read.rejection()).incrementAndGet();
                log.atDebug().addKeyValue("file", PeerText.quote(cache.toString()))
                        .addKeyValue("reason", read.detail()).log("HAMi-core region skipped");
                found = new Found(Optional.of(read), Optional.empty());
            } catch (IOException e) {
                unreadable.incrementAndGet();
                found = new Found(Optional.empty(), Optional.of("unreadable: " + e.getMessage()));
            }
        }
        return found;
    }

    /**
     * Reads {@code file} on the reader thread, waiting at most the read timeout; null when the read did not end
     * then. The blocked thread is left to its open (a daemon; it ends when a writer opens the FIFO) and a new one
     * reads next: at most one such thread per directory, which is never read again.
     */
    private RegionRead read(Path file) throws IOException {
        if (reader == null) {
            reader = Executors.newSingleThreadExecutor(DaemonThreads.named("tg-monitor-read"));
        }
        Future<RegionRead> read = reader.submit(() -> source.read(file));
        try {
            return read.get(readTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            read.cancel(true);
            reader.shutdownNow();
            reader = null;
            blockedReads.incrementAndGet();
            log.atWarn().addKeyValue("file", PeerText.quote(file.toString())).addKeyValue("timeout",
                    io.tenantgateway.common.time.GoDuration.format(readTimeout))
                    .log("HAMi-core region read blocked (not a regular file any more?): its directory is not read"
                            + " again");
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.shutdownNow();
        }
    }

    /**
     * The containers of {@code pod} that the allocation annotation gives devices and no region was read for: their
     * limits from the annotation (memory in MiB, cores in percent), no usage.
     */
    private static void annotated(PodInfo pod, Set<String> withRegion, List<ContainerUsage> out) {
        if (pod.allocated().isEmpty()) {
            return;
        }
        List<List<ContainerDevice>> entries;
        try {
            entries = DeviceAllocationCodec.decode(pod.allocated().get());
        } catch (RuntimeException malformed) {
            return;
        }
        for (String container : pod.containers()) {
            int index = pod.entryIndex(container);
            if (index >= entries.size() || entries.get(index).isEmpty()
                    || withRegion.contains(pod.uid() + "_" + container)) {
                continue;
            }
            List<DeviceUsage> devices = new ArrayList<>();
            List<ContainerDevice> allocated = entries.get(index);
            for (int i = 0; i < allocated.size() && i < 16; i++) {
                ContainerDevice device = allocated.get(i);
                // A pod's annotations are its author's to write: a memory figure past what bytes can hold saturates.
                long memoryMiB = Math.max(0, device.memoryMiB());
                long limitBytes = memoryMiB > Long.MAX_VALUE >> 20 ? Long.MAX_VALUE : memoryMiB << 20;
                devices.add(new DeviceUsage(i, device.uuid(), limitBytes,
                        Math.max(0, device.cores()), 0, 0, 0, 0, 0));
            }
            out.add(new ContainerUsage(pod.namespace(), pod.name(), container, ContainerUsage.Source.ANNOTATION,
                    devices, 0));
        }
    }

    /** Removes a directory without following links out of it. */
    private void remove(String directory) {
        Path path = root.resolve(directory);
        try {
            Files.walkFileTree(path, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException failure) throws IOException {
                    if (failure != null) {
                        throw failure;
                    }
                    Files.delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
            removed.incrementAndGet();
            log.atInfo().addKeyValue("dir", PeerText.quote(directory)).addKeyValue("grace", io.tenantgateway.common.time.GoDuration.format(cleanup.grace()))
                    .log("removed HAMi-core cache directory of a pod that is gone");
        } catch (NoSuchFileException gone) {
            // removed meanwhile
        } catch (IOException e) {
            log.atWarn().addKeyValue("dir", PeerText.quote(directory)).addKeyValue("err", e.toString())
                    .log("cannot remove HAMi-core cache directory");
        }
    }
}
