package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NAMESPACE;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Allocation completion and owner-checked release against the mock API server (CRUD mode, real HTTP). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocationControllerIT extends LockClusterTestBase {
    private final PrometheusRegistry registry = new PrometheusRegistry();

    @Test
    void labFailureIsReproducedWithoutTheAgentAndFixedWithIt() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");

        // Without the agent: pod 1's Bind takes the lock and nobody completes its allocation…
        cluster.filterAndBind("p1", GPU_A);
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        // …so pod 2's Bind on the same node is refused, as in the reference lab.
        cluster.scheduler.filter(NAMESPACE, "p2", NODE, List.of(List.of(ContainerDevice.nvidia(GPU_A, 10000, 30))));
        BindResult refused = cluster.scheduler.bind(NAMESPACE, "p2", NODE);
        assertThat(refused.bound()).isFalse();
        assertThat(refused.error()).isEqualTo("node node-a has been locked within 5m0s: node lock contention");
        assertThat(cluster.pod("p2").getSpec().getNodeName()).isNull();

        // With the agent: pod 1's allocation completes and its lock goes, with the clock standing still.
        AllocationController controller = cluster.startController(registry);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
            assertThat(cluster.lock(NODE)).isNull();
        });
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_ALLOCATED)).isEqualTo(GPU_A + ",NVIDIA,10000,30:;");

        // Pod 2's Bind now succeeds at once: no waiting for the 5-minute expiry.
        assertThat(cluster.clock.instant()).isEqualTo(LockTestCluster.START);
        BindResult bound = cluster.scheduler.bind(NAMESPACE, "p2", NODE);
        assertThat(bound.error()).isEmpty();
        assertThat(bound.bound()).isTrue();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("success");
            assertThat(cluster.lock(NODE)).isNull();
        });
        cluster.awaitReleaseEvents(2);

        assertThat(LockTestCluster.allocations(registry, "success")).isEqualTo(2);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(2);
        assertThat(LockTestCluster.holdTime(registry).getCount()).isEqualTo(2);
        List<Event> allocated = cluster.events(AllocationController.REASON_ALLOCATED);
        assertThat(allocated).extracting(e -> e.getInvolvedObject().getName()).containsExactlyInAnyOrder("p1", "p2");
        assertThat(allocated).allSatisfy(e -> {
            assertThat(e.getType()).isEqualTo("Normal");
            assertThat(e.getMetadata().getNamespace()).isEqualTo(NAMESPACE);
            assertThat(e.getMessage()).isEqualTo("allocated devices [" + GPU_A + "] on node node-a");
        });
        List<Event> released = cluster.events(AllocationController.REASON_LOCK_RELEASED);
        assertThat(released).hasSize(2).allSatisfy(e -> {
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
            assertThat(e.getInvolvedObject().getName()).isEqualTo(NODE);
            assertThat(e.getMessage()).contains(": allocated (allocation of team-a/p");
        });
        assertThat(controller.snapshot().recentActions()).extracting(LockAction::kind)
                .containsSubsequence("allocated", "lock-released", "allocated", "lock-released");
    }

    @Test
    void anotherPodsLockIsNeverReleased() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
        cluster.filterAndBind("p1", GPU_A);
        // p1's lock expired and p2's Bind took it over; p2's Bind is still in progress (not bound yet).
        String p2Lock = "2025-06-01T10:00:00Z,team-a,p2";
        cluster.setLock(NODE, p2Lock);

        AllocationController controller = cluster.startController(registry);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success"));
        long passes = controller.snapshot().reapPasses();
        await().atMost(Duration.ofSeconds(10)).until(() -> controller.snapshot().reapPasses() >= passes + 3);

        assertThat(cluster.lock(NODE)).isEqualTo(p2Lock);
        assertThat(controller.snapshot().lockVerdict()).isEqualTo("held by team-a/p2 since 2025-06-01T10:00:00Z (NOT_BOUND)");
        for (ReleaseReason reason : ReleaseReason.values()) {
            assertThat(LockTestCluster.releases(registry, reason)).as(reason.label()).isZero();
        }
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).isEmpty();
        assertThat(LockTestCluster.allocations(registry, "success")).isEqualTo(1);
    }

    @Test
    void devicesNotOnThisNodeFailTheAllocationReleaseTheLockAndWarn() {
        cluster.createGpuPod("p1");
        String foreign = "GPU-ffffffff-0000-4000-8000-0000000000ff";
        cluster.filterAndBind("p1", foreign);

        cluster.startController(LockTestCluster.config(AllocationMode.COMPLETE), registry, () -> Set.of(GPU_A));

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
            assertThat(cluster.lock(NODE)).isNull();
            assertThat(cluster.events(AllocationController.REASON_ALLOCATION_FAILED)).hasSize(1);
        });
        cluster.awaitReleaseEvents(1);
        Event warning = cluster.events(AllocationController.REASON_ALLOCATION_FAILED).get(0);
        assertThat(warning.getType()).isEqualTo("Warning");
        assertThat(warning.getInvolvedObject().getName()).isEqualTo("p1");
        assertThat(warning.getMessage()).isEqualTo("devices [" + foreign + "] are not registered on node node-a");
        // Nothing was handed out, so nothing is consumed.
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(foreign + ",NVIDIA,10000,30:;");
        assertThat(LockTestCluster.allocations(registry, "failed")).isEqualTo(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.FAILED)).isEqualTo(1);
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains(": failed (allocation of team-a/p1 failed)"));
    }

    @Test
    void aPodDeletedMidAllocationEndsCleanly() throws Exception {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        // The pod vanishes between the agent's read and its write: the write answers 404.
        cluster.server.expect().patch().withPath("/api/v1/namespaces/team-a/pods/p1")
                .andReturn(404, new StatusBuilder().withCode(404).withReason("NotFound").withStatus("Failure").build())
                .always();
        cluster.takeRequests();

        cluster.startController(registry);
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.takeRequests().contains("PATCH /api/v1/namespaces/team-a/pods/p1"));
        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").delete();

        // Its lock is then judged on its own: the holder is gone.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.DANGLING)).isEqualTo(1);
        assertThat(LockTestCluster.allocations(registry, "success")).isZero();
        assertThat(LockTestCluster.allocations(registry, "failed")).isZero();
        assertThat(cluster.events(AllocationController.REASON_ALLOCATED)).isEmpty();
    }

    @Test
    void startFailsCleanlyWhenTheApiServerIsUnreachable() throws Exception {
        int closedPort = TunnelTestbed.freePort();
        try (KubernetesClient unreachable = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + closedPort).withRequestRetryBackoffLimit(0).build()).build()) {
            AllocationController controller = new AllocationController(unreachable,
                    LockTestCluster.config(AllocationMode.COMPLETE).withStartTimeout(Duration.ofSeconds(5)),
                    () -> Set.of(GPU_A), registry, cluster.clock);

            assertThatThrownBy(controller::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("allocation controller for node node-a: informers did not start within PT5S");
            assertThat(controller.synced()).isFalse();
            controller.close();
            controller.close();
        }
    }

    @Test
    void allocationWaitsUntilTheNodeHasRegisteredDevices() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        AtomicReference<Set<String>> registered = new AtomicReference<>(Set.of());

        AllocationController controller = cluster.startController(
                LockTestCluster.config(AllocationMode.COMPLETE), registry, registered::get);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(controller.snapshot().recentActions())
                .extracting(LockAction::kind).contains("waiting"));
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");

        registered.set(Set.of(GPU_A)); // the registrar's first round
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
            assertThat(cluster.lock(NODE)).isNull();
        });
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.allocations(registry, "failed")).isZero();
    }

    @Test
    void observeModeReportsButDoesNotWrite() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);

        AllocationController controller = cluster.startController(
                LockTestCluster.config(AllocationMode.OBSERVE), registry, () -> Set.of(GPU_A));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(controller.snapshot().recentActions())
                .extracting(LockAction::kind).contains("observed"));
        long passes = controller.snapshot().reapPasses();
        await().atMost(Duration.ofSeconds(10)).until(() -> controller.snapshot().reapPasses() >= passes + 3);

        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(controller.snapshot().recentActions()).extracting(LockAction::kind).containsOnlyOnce("observed");
        assertThat(cluster.events(AllocationController.REASON_ALLOCATED)).isEmpty();
    }
}
