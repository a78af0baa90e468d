package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.GpuDevice;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code --report-node-capacity}'s totals: healthy devices only, under HAMi's resource names. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeCapacityReportTest {
    private static final NodeCapacityReport HAMI = new NodeCapacityReport("nvidia.com/gpumem", "nvidia.com/gpucores");

    private static GpuDevice gpu(String id, int memory, int cores, boolean healthy) {
        return new GpuDevice(id, 0, 10, memory, cores, "NVIDIA L4", 0, "hami-core", healthy);
    }

    @Test
    void totalsAreMemoryAndCoresOfTheHealthyDevices() {
        List<GpuDevice> devices = List.of(gpu("GPU-a", 23034, 100, true), gpu("GPU-b", 23034, 100, true),
                gpu("GPU-c", 15360, 50, false));

        assertThat(HAMI.totals(devices)).containsExactly(entry("nvidia.com/gpumem", "46068"),
                entry("nvidia.com/gpucores", "200"));
        // A device's own devcore counts (core scaling: 150 per GPU), not a fixed 100.
        assertThat(HAMI.totals(List.of(gpu("GPU-a", 81920, 150, true)))).containsExactly(
                entry("nvidia.com/gpumem", "81920"), entry("nvidia.com/gpucores", "150"));
    }

    @Test
    void noHealthyDeviceLowersTheTotalsToZeroRatherThanRemovingThem() {
        assertThat(HAMI.totals(List.of(gpu("GPU-a", 23034, 100, false)))).containsExactly(
                entry("nvidia.com/gpumem", "0"), entry("nvidia.com/gpucores", "0"));
    }

    @Test
    void aResourceTheDeviceConfigDoesNotNameIsNotReported() {
        NodeCapacityReport memoryOnly = new NodeCapacityReport("example.com/vram", " ");
        assertThat(memoryOnly.resources()).containsExactly("example.com/vram");
        assertThat(memoryOnly.totals(List.of(gpu("GPU-a", 23034, 100, true))))
                .containsExactly(entry("example.com/vram", "23034"));
        assertThat(HAMI.resources()).containsExactly("nvidia.com/gpumem", "nvidia.com/gpucores");
    }

    @Test
    void namesMustLeaveSomethingToReportAndDiffer() {
        assertThatThrownBy(() -> new NodeCapacityReport("", "")).isInstanceOf(ConfigException.class)
                .hasMessage("--report-node-capacity: true with neither nvidia.resourceMemoryName nor"
                        + " nvidia.resourceCoreName in --device-config (expected: at least one resource name to"
                        + " report)");
        assertThatThrownBy(() -> new NodeCapacityReport("nvidia.com/gpumem", "nvidia.com/gpumem"))
                .isInstanceOf(ConfigException.class).hasMessage("--device-config: nvidia.resourceMemoryName and"
                        + " nvidia.resourceCoreName both nvidia.com/gpumem (expected: two different names:"
                        + " --report-node-capacity reports both)");
    }
}
