package io.tenantgateway.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** HAMi-core's files on the host, through a host root in a temporary directory: no API server, no device plugin. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiCoreHostFilesTest {
    private static final String CACHE = "/usr/local/vgpu/containers/uid-p1_cuda";

    @TempDir
    Path host;

    private HamiCoreHostFiles files() {
        return new HamiCoreHostFiles(AllocatorConfig.defaults("worker-1").withHostRoot(host));
    }

    @Test
    void theLibraryIsThePlainOneWhenNoVersionedCopyIsThere() throws Exception {
        assertThat(files().libraryFile()).isEqualTo("libvgpu.so"); // no directory at all

        Path vgpu = Files.createDirectories(host.resolve("usr/local/vgpu"));
        Files.createFile(vgpu.resolve("libvgpu.so"));
        Files.createFile(vgpu.resolve("ld.so.preload"));

        assertThat(files().libraryFile()).isEqualTo("libvgpu.so");
    }

    @Test
    void theHighestVersionedLibraryWinsNumbersComparedAsNumbers() throws Exception {
        Path vgpu = Files.createDirectories(host.resolve("usr/local/vgpu"));
        for (String name : new String[] {"libvgpu.so", "libvgpu.so.v2.9.0", "libvgpu.so.v2.10.0", "libvgpu.so.v2.2.1"}) {
            Files.createFile(vgpu.resolve(name));
        }

        assertThat(files().libraryFile()).isEqualTo("libvgpu.so.v2.10.0");
        assertThat(HamiCoreHostFiles.versionKey("libvgpu.so.v2.9.0"))
                .isLessThan(HamiCoreHostFiles.versionKey("libvgpu.so.v2.10.0"));
    }

    @Test
    void theCacheDirectoryIsRecreatedEmptyAndBothDirectoriesAreOpenToAll() throws Exception {
        Path cache = Files.createDirectories(host.resolve(CACHE.substring(1)));
        Files.writeString(Files.createDirectories(cache.resolve("old")).resolve("region.cache"), "stale");

        files().prepare(CACHE);

        assertThat(cache).isEmptyDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cache))).isEqualTo("rwxrwxrwx");
        Path lock = host.resolve("tmp/vgpulock");
        assertThat(lock).isDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(lock))).isEqualTo("rwxrwxrwx");
    }

    @Test
    void aHostPathThatCannotBeCreatedIsLoggedNotThrownAndTheNextCallTriesAgain() throws Exception {
        Path blocker = Files.createFile(host.resolve("tmp")); // /tmp/vgpulock cannot be made under a file
        HamiCoreHostFiles files = files();

        files.prepare(CACHE);
        files.prepare(CACHE); // the same problem again: logged once, still not thrown

        assertThat(host.resolve(CACHE.substring(1))).isDirectory();
        Files.delete(blocker);
        files.prepare(CACHE);
        assertThat(host.resolve("tmp/vgpulock")).isDirectory();
    }
}
