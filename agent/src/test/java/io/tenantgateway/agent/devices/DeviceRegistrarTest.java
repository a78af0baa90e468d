package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.hami.GpuDevice;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registrar's pure parts; the API behaviour is in {@link DeviceRegistrarIT}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceRegistrarTest {

    @Test
    void capacityIsGpusTimesSplitCountPlusMockPluginTotalsOfHealthyDevices() {
        List<GpuDevice> devices = List.of(
                new GpuDevice("GPU-a", 0, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true),
                new GpuDevice("GPU-b", 1, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true),
                new GpuDevice("GPU-c", 2, 4, 15360, 50, "NVIDIA-Tesla T4", 0, "hami-core", false));

        assertThat(DeviceRegistrar.capacity(devices)).containsExactly(
                entry("nvidia.com/gpu", "20"),
                entry("nvidia.com/gpumem", "46068"),
                entry("nvidia.com/gpucores", "200"),
                entry("nvidia.com/gpumem-percentage", "200"));
    }

    @Test
    void capacityPatchSetsCapacityAndAllocatableAndDeletesWithNull() {
        Map<String, String> delete = new LinkedHashMap<>();
        delete.put("nvidia.com/gpu", null);
        delete.put("nvidia.com/gpumem", "0");

        assertThat(DeviceRegistrar.capacityPatch(delete)).isEqualTo(
                "{\"status\":{\"capacity\":{\"nvidia.com/gpu\":null,\"nvidia.com/gpumem\":\"0\"},"
                        + "\"allocatable\":{\"nvidia.com/gpu\":null,\"nvidia.com/gpumem\":\"0\"}}}");
    }

    @Test
    void handshakeIsReportedWithDateAndTimeInTheClocksZone() {
        Instant at = Instant.parse("2026-03-01T09:05:07.999Z");

        assertThat(DeviceRegistrar.handshakeValue(at, ZoneOffset.UTC)).isEqualTo("Reported 2026-03-01 09:05:07");
        assertThat(DeviceRegistrar.handshakeValue(at, ZoneId.of("Asia/Tokyo"))).isEqualTo("Reported 2026-03-01 18:05:07");
    }

    @Test
    void apiErrorsMapToFailureReasons() {
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("gone", 404, null)))
                .isEqualTo(FailureReason.NODE_MISSING);
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("conflict", 409, null)))
                .isEqualTo(FailureReason.CONFLICT);
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("boom", 503, null)))
                .isEqualTo(FailureReason.SERVER_ERROR);
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("slow down", 429, null)))
                .isEqualTo(FailureReason.SERVER_ERROR);
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("forbidden", 403, null)))
                .isEqualTo(FailureReason.API_REJECTED);
        assertThat(DeviceRegistrar.classify(new KubernetesClientException("connect timed out")))
                .isEqualTo(FailureReason.API_UNREACHABLE);
    }
}
