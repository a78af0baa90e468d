package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NAMESPACE;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lock controller against the mock API server (CRUD mode, real HTTP) and the scheduler simulator: it reports
 * allocations in progress, never writes a pod, and releases a completed holder's lock only when it names that pod.
 * (Allocations themselves: the device plugin's Allocate, HamiAllocatorIT in the agent and the lab.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocationControllerIT extends LockClusterTestBase {
    private final PrometheusRegistry registry = new PrometheusRegistry();

    /** The reference lab's failure: nobody completes the allocation, so the next Bind on the node is refused. */
    @Test
    void withoutAnAllocationTheLockStaysAndTheNextBindIsRefused() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
        cluster.filterAndBind("p1", GPU_A);
        AllocationController controller = cluster.startController(registry);
        await().atMost(WAIT).untilAsserted(() -> assertThat(controller.snapshot().recentActions())
                .extracting(LockAction::kind).contains("observed"));

        cluster.scheduler.filter(NAMESPACE, "p2", NODE, List.of(List.of(ContainerDevice.nvidia(GPU_A, 10000, 30))));
        BindResult refused = cluster.scheduler.bind(NAMESPACE, "p2", NODE);

        assertThat(refused.bound()).isFalse();
        assertThat(refused.error()).isEqualTo("node node-a has been locked within 5m0s: node lock contention");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(controller.snapshot().recentActions()).filteredOn(a -> a.kind().equals("observed"))
                .first().satisfies(a -> assertThat(a.detail()).endsWith("kubelet's Allocate calls to this agent's"
                        + " device plugin complete it"));
    }

    /** The plugin wrote success but the agent stopped before the release: the controller finishes it. */
    @Test
    void theLockOfAnAllocatedHolderIsReleased() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
        cluster.filterAndBind("p1", GPU_A);
        cluster.markAllocated("p1");

        cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(1);
        assertThat(LockTestCluster.holdTime(registry).getCount()).isEqualTo(1);
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement().satisfies(e -> {
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
            // Found by the pod's reconcile or the node's, whichever runs first.
            assertThat(e.getMessage()).matches("released hami\\.io/mutex\\.lock \"2025-06-01T10:00:00Z,team-a,p1\":"
                    + " allocated \\((allocation of team-a/p1 completed|holder team-a/p1 is allocated \\(bind-phase"
                    + " success\\))\\)");
        });
        // The next pod binds at once: no waiting for the 5-minute expiry.
        cluster.filterAndBind("p2", GPU_A);
        assertThat(cluster.clock.instant()).isEqualTo(LockTestCluster.START);
    }

    /** HAMi after v2.10 writes the lock time with nanoseconds (RFC3339Nano); the release reads it as the seconds form. */
    @Test
    void theLockOfAnAllocatedHolderIsReleasedWhenItsTimeHasNanoseconds() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        cluster.markAllocated("p1");
        String lock = "2025-06-01T10:00:00.123456789Z,team-a,p1";
        cluster.setLock(NODE, lock);

        cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(1);
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement().satisfies(e ->
                assertThat(e.getMessage()).startsWith("released hami.io/mutex.lock \"" + lock + "\": allocated"));
    }

    @Test
    void anotherPodsLockIsNeverReleased() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
        cluster.filterAndBind("p1", GPU_A);
        cluster.markAllocated("p1");
        // p1's lock expired and p2's Bind took it over; p2's Bind is still in progress (not bound yet).
        String p2Lock = "2025-06-01T10:00:00Z,team-a,p2";
        cluster.setLock(NODE, p2Lock);

        AllocationController controller = cluster.startController(registry);
        long passes = controller.snapshot().reapPasses();
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= passes + 3);

        assertThat(cluster.lock(NODE)).isEqualTo(p2Lock);
        assertThat(controller.snapshot().lockVerdict()).isEqualTo("held by team-a/p2 since 2025-06-01T10:00:00Z (NOT_BOUND)");
        for (ReleaseReason reason : ReleaseReason.values()) {
            assertThat(LockTestCluster.releases(registry, reason)).as(reason.label()).isZero();
        }
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).isEmpty();
    }

    @Test
    void startFailsCleanlyWhenTheApiServerIsUnreachable() throws Exception {
        int closedPort = TunnelTestbed.freePort();
        try (KubernetesClient unreachable = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + closedPort).withRequestRetryBackoffLimit(0).build()).build()) {
            AllocationController controller = new AllocationController(unreachable,
                    LockTestCluster.config(AllocationMode.DEVICE_PLUGIN).withStartTimeout(Duration.ofSeconds(5)),
                    cluster.metrics(registry), cluster.clock);

            assertThatThrownBy(controller::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("allocation controller for node node-a: informers did not start within PT5S");
            assertThat(controller.synced()).isFalse();
            controller.close();
            controller.close();
        }
    }

    @Test
    void observeModeReportsButDoesNotWrite() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        cluster.markAllocated("p1"); // HAMi's plugin wrote success and releases the lock itself

        AllocationController controller = cluster.startController(LockTestCluster.config(AllocationMode.OBSERVE),
                registry);
        long passes = controller.snapshot().reapPasses();
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= passes + 3);

        assertThat(cluster.lock(NODE)).as("HAMi's plugin releases it, not us").isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).isEmpty();
    }

    @Test
    void observeModeReportsAnAllocationInProgressOnce() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);

        AllocationController controller = cluster.startController(LockTestCluster.config(AllocationMode.OBSERVE),
                registry);
        await().atMost(WAIT).untilAsserted(() -> assertThat(controller.snapshot().recentActions())
                .extracting(LockAction::kind).contains("observed"));
        long passes = controller.snapshot().reapPasses();
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= passes + 3);

        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(controller.snapshot().recentActions()).extracting(LockAction::kind).containsOnlyOnce("observed");
    }
}
