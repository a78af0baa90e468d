package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registration as values: no API server, no clock, no threads. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegisterEncodingTest {
    private static final Instant NOW = Instant.parse("2026-12-07T20:45:34Z");
    private static final String HANDSHAKE = "Reported 2026-12-07 20:45:34";
    private static final GpuDevice GPU = new GpuDevice("GPU-a", 0, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true);
    private static final SimulatedVendor DCU = new SimulatedVendor(NodeVendor.HYGON, List.of(), "dcu-register",
            Map.of("shared-key", "1"), Map.of("hygon.com/dcunum", "4"));

    @Test
    void nvidiasRegisterAnnotationIsWrittenWhenItDiffersItsHandshakeEveryRound() {
        String register = RegisterEncoding.register(List.of(GPU));

        RegisterEncoding.AnnotationPatch first = RegisterEncoding.annotations(Map.of(), register, List.of(), NOW, NOW,
                ZoneOffset.UTC);
        RegisterEncoding.AnnotationPatch next = RegisterEncoding.annotations(
                Map.of(Annotations.NODE_NVIDIA_REGISTER, register), register, List.of(), NOW, NOW, ZoneOffset.UTC);

        assertThat(first.values()).containsExactly(Map.entry(Annotations.NODE_NVIDIA_REGISTER, register),
                Map.entry(Annotations.NODE_HANDSHAKE, HANDSHAKE));
        assertThat(first.nvidiaChanged()).isTrue();
        assertThat(next.values()).containsExactly(Map.entry(Annotations.NODE_HANDSHAKE, HANDSHAKE));
        assertThat(next.nvidiaChanged()).isFalse();
    }

    @Test
    void aVendorsKeysAreWrittenWhenTheyDifferAndNvidiasNotWhenItIsNotOurs() {
        RegisterEncoding.AnnotationPatch first = RegisterEncoding.annotations(Map.of(), null, List.of(DCU), NOW, NOW,
                ZoneOffset.UTC);
        RegisterEncoding.AnnotationPatch next = RegisterEncoding.annotations(Map.of(
                NodeVendor.HYGON.registerKey(), "dcu-register", "shared-key", "1"), null, List.of(DCU), NOW, NOW,
                ZoneOffset.UTC);

        assertThat(first.values()).containsOnlyKeys(NodeVendor.HYGON.registerKey(), "shared-key",
                NodeVendor.HYGON.handshakeKey()).doesNotContainKey(Annotations.NODE_HANDSHAKE);
        assertThat(first.vendorsChanged()).containsExactly(DCU);
        assertThat(next.values()).containsOnlyKeys(NodeVendor.HYGON.handshakeKey());
        assertThat(next.vendorsChanged()).isEmpty();
    }

    @Test
    void theAdvertisedCapacityIsNvidiasWhenOursThenEachVendorsAndCarriedOnlyInBothMaps() {
        assertThat(RegisterEncoding.advertised(null, List.of(DCU))).containsExactly(Map.entry("hygon.com/dcunum", "4"));
        assertThat(RegisterEncoding.advertised(List.of(GPU), List.of(DCU))).containsKeys("nvidia.com/gpu",
                "hygon.com/dcunum");

        Node both = new NodeBuilder().withNewStatus().withCapacity(Map.of("hygon.com/dcunum", new Quantity("4")))
                .withAllocatable(Map.of("hygon.com/dcunum", new Quantity("4"))).endStatus().build();
        Node capacityOnly = new NodeBuilder().withNewStatus()
                .withCapacity(Map.of("hygon.com/dcunum", new Quantity("4"))).endStatus().build();
        assertThat(RegisterEncoding.carries(both, Map.of("hygon.com/dcunum", "4"))).isTrue();
        assertThat(RegisterEncoding.carries(both, Map.of("hygon.com/dcunum", "5"))).isFalse();
        assertThat(RegisterEncoding.carries(capacityOnly, Map.of("hygon.com/dcunum", "4"))).isFalse();
        assertThat(RegisterEncoding.carries(new Node(), Map.of("hygon.com/dcunum", "4"))).isFalse();
    }

    @Test
    void removalTakesWhatWeWroteAndLeavesAVendorStandingAsideItsSharedKeys() {
        SimulatedVendor aside = new SimulatedVendor(NodeVendor.HYGON, List.of(), "other", Map.of("shared-key", "1"),
                Map.of());

        RegisterEncoding.Removal removal = RegisterEncoding.removal(true, List.of(DCU), List.of(DCU, aside), true,
                null);

        assertThat(removal.annotations()).containsOnlyKeys(Annotations.NODE_NVIDIA_REGISTER,
                Annotations.NODE_HANDSHAKE, NodeVendor.HYGON.registerKey(), NodeVendor.HYGON.handshakeKey())
                .allSatisfy((key, value) -> assertThat(value).isNull());
        assertThat(removal.capacity()).containsKeys("nvidia.com/gpu", "nvidia.com/gpumem", "hygon.com/dcunum")
                .allSatisfy((key, value) -> assertThat(value).isNull());
        assertThat(RegisterEncoding.removal(false, List.of(), List.of(DCU), false, null).annotations()).isEmpty();
    }
}
