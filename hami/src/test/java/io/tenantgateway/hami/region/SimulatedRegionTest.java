package io.tenantgateway.hami.region;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the simulated HAMi-core writes reads back through the reader as a v1 region with exactly its figures. */
class SimulatedRegionTest {
    @TempDir
    Path dir;

    @Test
    void aWrittenRegionReadsBackWithItsFigures() throws Exception {
        Path file = dir.resolve("containers/uid_cuda/0b1c.cache");
        SimulatedRegion.write(file, 4242, List.of(
                new SimulatedRegion.Device("GPU-aaaa", 10L << 30, 30, 3L << 30, 42),
                new SimulatedRegion.Device("GPU-bbbb", 5L << 30, 0, 800, 7)), 1_700_000_000L);

        assertThat(Files.size(file)).isEqualTo(2008952);
        RegionRead read = SharedRegion.read(file);
        assertThat(read.isOk()).as(read.detail()).isTrue();
        RegionSnapshot snapshot = read.snapshot();
        assertThat(snapshot.version()).isEqualTo(RegionVersion.V1);
        assertThat(snapshot.procNum()).isEqualTo(1);
        assertThat(snapshot.liveProcesses()).isEqualTo(1);
        assertThat(snapshot.lastKernelTime()).isEqualTo(1_700_000_000L);
        assertThat(snapshot.warnings()).isEmpty();
        assertThat(snapshot.devices()).containsExactly(
                new DeviceUsage(0, "GPU-aaaa", 10L << 30, 30, 3L << 30, (3L << 30) / 8, (3L << 30) / 8,
                        (3L << 30) - 2 * ((3L << 30) / 8), 42),
                new DeviceUsage(1, "GPU-bbbb", 5L << 30, 0, 800, 100, 100, 600, 7));
    }

    @Test
    void writingAgainReplacesTheFileWhole() throws Exception {
        Path file = dir.resolve("r.cache");
        SimulatedRegion.write(file, 1, List.of(new SimulatedRegion.Device("GPU-1", 100, 0, 10, 1)), 0);
        SimulatedRegion.write(file, 1, List.of(new SimulatedRegion.Device("GPU-1", 100, 0, 90, 2)), 0);
        RegionSnapshot snapshot = SharedRegion.read(file).snapshot();
        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(90);
        assertThat(snapshot.hasLastKernel()).isFalse();
        try (var left = Files.list(dir)) {
            assertThat(left).containsExactly(file);
        }
    }
}
