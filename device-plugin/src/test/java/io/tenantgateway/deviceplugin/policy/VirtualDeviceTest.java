package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.GpuDevice;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class VirtualDeviceTest {
    private static final String A = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";
    private static final String B = "GPU-9b90c3e0-7f5d-4a3e-9c1b-2e4f6a8b0c22";

    @Test
    void everyGpuIsSplitIntoItsCountOfReplicasWithItsHealth() {
        List<GpuDevice> gpus = List.of(new GpuDevice(A, 0, 3, 81920, 100, "NVIDIA A100", 0, "hami-core", true),
                new GpuDevice(B, 1, 2, 23034, 100, "NVIDIA L4", 1, "hami-core", false));

        List<VirtualDevice> devices = VirtualDevice.of(gpus, false);

        assertThat(devices).extracting(VirtualDevice::id).containsExactly(A + "-0", A + "-1", A + "-2", B + "-0",
                B + "-1");
        assertThat(devices).extracting(VirtualDevice::healthy).containsExactly(true, true, true, false, false);
        assertThat(devices).allSatisfy(d -> assertThat(d.numaNode()).isEmpty());
        assertThat(VirtualDevice.of(gpus, true)).extracting(VirtualDevice::numaNode)
                .containsExactly(OptionalInt.of(0), OptionalInt.of(0), OptionalInt.of(0), OptionalInt.of(1),
                        OptionalInt.of(1));
    }
}
