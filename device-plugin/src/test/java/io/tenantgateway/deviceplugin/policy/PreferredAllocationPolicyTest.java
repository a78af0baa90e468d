package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.ContainerDevice;
import java.util.List;
import org.junit.jupiter.api.Test;

/** HAMi #1741: the preference names replicas of exactly the GPUs the scheduler chose. */
class PreferredAllocationPolicyTest {
    private static final String A = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";
    private static final String B = "GPU-9b90c3e0-7f5d-4a3e-9c1b-2e4f6a8b0c22";
    private static final List<String> AVAILABLE = List.of(A + "-0", A + "-1", A + "-2", B + "-0", B + "-1");

    @Test
    void aTwoGpuEntryGetsOneReplicaOfEachGpuNotTwoOfOne() {
        List<ContainerDevice> entry = List.of(ContainerDevice.nvidia(B, 1000, 10), ContainerDevice.nvidia(A, 1000, 10));

        assertThat(PreferredAllocationPolicy.select(AVAILABLE, List.of(), entry, 2)).contains(List.of(B + "-0",
                A + "-0"));
    }

    @Test
    void mustIncludeIdsCountForTheirGpu() {
        List<ContainerDevice> entry = List.of(ContainerDevice.nvidia(A, 1, 1), ContainerDevice.nvidia(B, 1, 1));

        assertThat(PreferredAllocationPolicy.select(AVAILABLE, List.of(A + "-2"), entry, 2))
                .contains(List.of(A + "-2", B + "-0"));
    }

    @Test
    void noPreferenceWhenTheEntryCannotBeMatched() {
        String other = "GPU-ffffffff-0000-4000-8000-0000000000ff";
        assertThat(PreferredAllocationPolicy.select(AVAILABLE, List.of(), List.of(ContainerDevice.nvidia(other, 1,
                1)), 1)).isEmpty();
        assertThat(PreferredAllocationPolicy.select(AVAILABLE, List.of(), List.of(ContainerDevice.nvidia(A, 1, 1)),
                2)).isEmpty();
    }
}
