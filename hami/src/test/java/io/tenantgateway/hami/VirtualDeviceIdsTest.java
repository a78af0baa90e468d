package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class VirtualDeviceIdsTest {
    private static final String UUID = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";

    @Test
    void virtualIdsAreTheUuidWithTheReplicaIndex() {
        assertThat(VirtualDeviceIds.of(UUID, 0)).isEqualTo(UUID + "-0");
        assertThat(VirtualDeviceIds.of(UUID, 9)).isEqualTo(UUID + "-9");
        assertThat(VirtualDeviceIds.physicalId(UUID + "-9")).isEqualTo(UUID);
        assertThat(VirtualDeviceIds.physicalId(UUID + "-12")).isEqualTo(UUID);
    }

    @Test
    void aWholeGpuIdIsItsOwnPhysicalId() {
        assertThat(VirtualDeviceIds.physicalId(UUID)).isEqualTo(UUID);
        // The last UUID group may be all digits: five dashes still mean a whole GPU.
        assertThat(VirtualDeviceIds.physicalId("GPU-24aa1c7c-9a3b-4e51-8b8f-123456789012"))
                .isEqualTo("GPU-24aa1c7c-9a3b-4e51-8b8f-123456789012");
        assertThat(VirtualDeviceIds.physicalId(UUID + "-x")).isEqualTo(UUID + "-x");
    }

    @Test
    void refusesIdsKubeletWouldRefuse() {
        assertThatThrownBy(() -> VirtualDeviceIds.of("GPU-" + "a".repeat(60), 1))
                .hasMessageContaining("(expected: at most 63, kubelet's limit)");
        assertThatThrownBy(() -> VirtualDeviceIds.of(UUID, -1)).hasMessage("index: -1 (expected: >= 0)");
    }
}
