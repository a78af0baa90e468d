package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NAMESPACE;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.tools.hamisim.HamiSchedulerSimulator;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scheduler simulator's writes, which the lock tests and the lab rely on, match HAMi's. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiSchedulerSimulatorIT extends LockClusterTestBase {
    @BeforeEach
    void setUp() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
    }

    @Test
    void filterWritesTheDeviceAnnotationsAndTheNodeLabel() {
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, List.of(List.of(), List.of(ContainerDevice.nvidia(GPU_A, 6144, 30))));

        var metadata = cluster.pod("p1").getMetadata();
        String devices = ";" + GPU_A + ",NVIDIA,6144,30:;";
        assertThat(metadata.getAnnotations())
                .containsEntry(Annotations.POD_VGPU_NODE, NODE)
                .containsEntry(Annotations.POD_VGPU_TIME, "1748772000")
                .containsEntry(Annotations.POD_DEVICES_TO_ALLOCATE, devices)
                .containsEntry(Annotations.POD_DEVICES_ALLOCATED, devices);
        assertThat(metadata.getLabels()).containsEntry(Annotations.POD_VGPU_NODE, NODE);
    }

    // --- Hygon and Ascend (VENDOR-PLUGINS.md §1.7, §5.4) --------------------------------------------------------

    private static final NodeVendor ASCEND_910B4 = NodeVendor.ascend("Ascend910B4");
    private static final String NPU_0 = "1A2B3C4D-00000000-00000000-00000000-00000001";
    private static final String NPU_1 = "1A2B3C4D-00000000-00000000-00000000-00000002";

    @Test
    void filterWritesHygonsKeysAndNothingVendorSpecific() {
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, Map.of(NodeVendor.HYGON,
                List.of(List.of(new ContainerDevice("DCU-ABC123", "DCU", 4096, 30)))));

        var metadata = cluster.pod("p1").getMetadata();
        assertThat(metadata.getAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of(
                Annotations.POD_VGPU_NODE, NODE,
                Annotations.POD_VGPU_TIME, "1748772000",
                "hami.io/dcu-devices-to-allocate", "DCU-ABC123,DCU,4096,30:;",
                "hami.io/dcu-devices-allocated", "DCU-ABC123,DCU,4096,30:;"));
        assertThat(metadata.getLabels()).containsEntry(Annotations.POD_VGPU_NODE, NODE);
    }

    @Test
    void filterWritesAnAscendChipsKeysPredicateTimeAndEachDevicesTemplate() {
        // An init container without a device, an 8192 MiB slice (a template), a whole chip (no template).
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, Map.of(ASCEND_910B4, List.of(List.of(),
                List.of(new ContainerDevice(NPU_0, "Ascend910B4", 8192, 0)),
                List.of(new ContainerDevice(NPU_1, "Ascend910B4", 32768, 0)))));

        String devices = ";" + NPU_0 + ",Ascend910B4,8192,0:;" + NPU_1 + ",Ascend910B4,32768,0:;";
        assertThat(cluster.pod("p1").getMetadata().getAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of(
                Annotations.POD_VGPU_NODE, NODE,
                Annotations.POD_VGPU_TIME, "1748772000",
                "hami.io/Ascend910B4-devices-to-allocate", devices,
                "hami.io/Ascend910B4-devices-allocated", devices,
                "predicate-time", "1748772000",
                "huawei.com/Ascend910B4", "[{\"UUID\":\"" + NPU_0 + "\",\"temp\":\"vir05_1c_8g\",\"memory\":8192},"
                        + "{\"UUID\":\"" + NPU_1 + "\",\"memory\":32768}]"));
    }

    @Test
    void inHamiCoreModeAscendsRuntimeInfoCarriesMemoryAndCoresWithoutATemplate() {
        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, Map.of(HamiSchedulerSimulator.VNPU_MODE, "hami-core"), Map.of()));

        cluster.scheduler.filter(NAMESPACE, "p1", NODE, Map.of(ASCEND_910B4,
                List.of(List.of(new ContainerDevice(NPU_0, "Ascend910B4", 8192, 40)))));

        assertThat(cluster.annotation("p1", "huawei.com/Ascend910B4"))
                .isEqualTo("[{\"UUID\":\"" + NPU_0 + "\",\"memory\":8192,\"core\":40}]");
    }

    @Test
    void aTwoVendorPodGetsBothVendorsKeysAndBindLocksTheNodeOnce() throws Exception {
        Map<NodeVendor, List<List<ContainerDevice>>> byVendor = new LinkedHashMap<>();
        byVendor.put(NodeVendor.NVIDIA, List.of(List.of(ContainerDevice.nvidia(GPU_A, 10000, 30)), List.of()));
        byVendor.put(ASCEND_910B4, List.of(List.of(), List.of(new ContainerDevice(NPU_0, "Ascend910B4", 16384, 0))));
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, byVendor);

        assertThat(cluster.pod("p1").getMetadata().getAnnotations())
                .containsEntry(Annotations.POD_DEVICES_TO_ALLOCATE, GPU_A + ",NVIDIA,10000,30:;;")
                .containsEntry(Annotations.POD_DEVICES_ALLOCATED, GPU_A + ",NVIDIA,10000,30:;;")
                .containsEntry("hami.io/Ascend910B4-devices-to-allocate", ";" + NPU_0 + ",Ascend910B4,16384,0:;")
                .containsEntry("huawei.com/Ascend910B4", "[{\"UUID\":\"" + NPU_0
                        + "\",\"temp\":\"vir10_3c_16g\",\"memory\":16384}]");

        cluster.takeRequests();
        assertThat(cluster.scheduler.bind(NAMESPACE, "p1", NODE)).isEqualTo(new BindResult(true, ""));

        assertThat(cluster.takeRequests()).as("one lock write for two vendors (HAMi #2255)")
                .filteredOn(r -> r.startsWith("PATCH /api/v1/nodes/")).containsExactly("PATCH /api/v1/nodes/" + NODE);
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.pod("p1").getSpec().getNodeName()).isEqualTo(NODE);
    }

    @Test
    void aPodWhoseOnlyDeviceContainerIsAnInitContainerTakesTheLockAndLosesItOnceAllocated() {
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, Map.of(NodeVendor.HYGON,
                List.of(List.of(new ContainerDevice("DCU-ABC123", "DCU", 4096, 30)), List.of())));
        assertThat(cluster.scheduler.bind(NAMESPACE, "p1", NODE)).isEqualTo(new BindResult(true, ""));
        assertThat(cluster.lock(NODE)).as("HAMi skips the lock here (#2640, #2795)")
                .isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE).error()).endsWith("node lock contention");

        // The device plugin consumed the init container's entry and wrote success; the lock goes as any pod's.
        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, Map.of("hami.io/dcu-devices-to-allocate", ";;",
                        Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS), Map.of()));
        PrometheusRegistry registry = new PrometheusRegistry();
        cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(1);
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE)).isEqualTo(new BindResult(true, ""));
    }

    @Test
    void filterRefusesEntryCountsThatDifferAndUnknownChips() {
        Map<NodeVendor, List<List<ContainerDevice>>> uneven = new LinkedHashMap<>();
        uneven.put(NodeVendor.NVIDIA, List.of(List.of()));
        uneven.put(NodeVendor.HYGON, List.of(List.of(), List.of()));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.scheduler.filter(NAMESPACE, "p1", NODE,
                uneven)).hasMessage("byVendor: [NVIDIA 1, Hygon 2] entries (expected: one per container for every "
                + "vendor)");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.scheduler.filter(NAMESPACE, "p1", NODE,
                Map.of(NodeVendor.ascend("Ascend999"), List.of(List.of())))).hasMessageStartingWith(
                "byVendor: Ascend999 (expected: an Ascend chip of the device configuration: [Ascend910A");
        assertThat(cluster.pod("p1").getMetadata().getAnnotations()).as("nothing written").isNullOrEmpty();
    }

    @Test
    void bindLocksTheNodeMarksThePodAllocatingAndBindsIt() {
        cluster.filterAndBind("p1", GPU_A);

        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_TIME)).isEqualTo("1748772000");
        assertThat(cluster.pod("p1").getSpec().getNodeName()).isEqualTo(NODE);
    }

    @Test
    void aLockIsTakenOverOnlyWhenStrictlyOlderThanTheTimeout() {
        cluster.filterAndBind("p1", GPU_A);

        cluster.clock.advance(LockTestCluster.TIMEOUT);
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE))
                .isEqualTo(new BindResult(false, "node node-a has been locked within 5m0s: node lock contention"));
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).as("lock first, then annotations").isNull();

        cluster.clock.advance(Duration.ofSeconds(1));
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE)).isEqualTo(new BindResult(true, ""));
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:05:01Z,team-a,p2");
    }

    @Test
    void aLockWhosePodIsGoneIsTakenOver() {
        cluster.filterAndBind("p1", GPU_A);
        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").delete();

        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE)).isEqualTo(new BindResult(true, ""));
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p2");
    }

    @Test
    void aMalformedLockRefusesEveryBind() {
        cluster.setLock(NODE, "2025-06-01T10:00:00Z,team-a");

        assertThat(cluster.scheduler.bind(NAMESPACE, "p1", NODE))
                .isEqualTo(new BindResult(false, "malformed lock annotation: expected 3 parts, got 2"));
        assertThat(cluster.pod("p1").getSpec().getNodeName()).isNull();
    }

    @Test
    void bindingSubresourceModePostsABinding() throws Exception {
        var simulator = new HamiSchedulerSimulator(cluster.client, cluster.clock, LockTestCluster.TIMEOUT,
                HamiSchedulerSimulator.BindMethod.BINDING_SUBRESOURCE, Backoff.HAMI_NODE_LOCK);
        cluster.takeRequests();

        assertThat(simulator.bind(NAMESPACE, "p1", NODE).bound()).isTrue();

        assertThat(cluster.takeRequests()).contains("POST /api/v1/namespaces/team-a/bindings");
        // CRUD mode stores the Binding as it was sent (a real API server binds the pod instead).
        Binding binding = cluster.client.resources(Binding.class).inNamespace(NAMESPACE).withName("p1").get();
        assertThat(binding.getTarget().getKind()).isEqualTo("Node");
        assertThat(binding.getTarget().getName()).isEqualTo(NODE);
    }
}
