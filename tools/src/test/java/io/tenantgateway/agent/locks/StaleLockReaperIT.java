package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NAMESPACE;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static io.tenantgateway.agent.locks.LockTestCluster.OTHER_NODE;
import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.Annotations;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The stale-lock reaper: expired, dangling and malformed locks, on this node only. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StaleLockReaperIT extends LockClusterTestBase {
    private final PrometheusRegistry registry = new PrometheusRegistry();

    @BeforeEach
    void setUp() {
        cluster.createNode(OTHER_NODE);
    }

    @Test
    void expiredLockIsReleasedOnThisNodeOnly() {
        cluster.createGpuPod("p1"); // exists and unbound: only the age makes it stale
        String expired = "2025-06-01T09:54:00Z,team-a,p1";
        cluster.setLock(NODE, expired);
        cluster.setLock(OTHER_NODE, expired);

        AllocationController controller = cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        Event released = cluster.events(AllocationController.REASON_LOCK_RELEASED).get(0);
        assertThat(released.getMessage()).isEqualTo("released hami.io/mutex.lock \"" + expired + "\": expired "
                + "(taken at 2025-06-01T09:54:00Z, older than PT5M (holder team-a/p1))");
        assertThat(LockTestCluster.releases(registry, ReleaseReason.EXPIRED)).isEqualTo(1);
        assertThat(LockTestCluster.holdTime(registry).getCount()).isEqualTo(1);
        assertThat(LockTestCluster.holdTime(registry).getSum()).isEqualTo(360.0);
        long passes = controller.snapshot().reapPasses();
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= passes + 3);
        assertThat(cluster.lock(OTHER_NODE)).as("another node's lock").isEqualTo(expired);
    }

    @Test
    void lockOfAHolderThatGetsDeletedIsReleasedAsDangling() {
        cluster.createGpuPod("p1");
        String fresh = "2025-06-01T09:59:00Z,team-a,p1";
        cluster.setLock(NODE, fresh);
        AllocationController controller = cluster.startController(registry);

        // The holder exists and its Bind may still be running: the lock stays.
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= 3);
        assertThat(cluster.lock(NODE)).isEqualTo(fresh);
        assertThat(controller.snapshot().lockValue()).isEqualTo(fresh);

        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").delete();

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).endsWith(": dangling (holder team-a/p1 no longer exists)"));
        assertThat(LockTestCluster.releases(registry, ReleaseReason.DANGLING)).isEqualTo(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.EXPIRED)).isZero();
    }

    @Test
    void lockOfAFinishedHolderIsReleasedAsDangling() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        cluster.setPodPhase("p1", "Failed"); // e.g. kubelet rejected it before any allocation

        cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).endsWith(": dangling (holder team-a/p1 has finished (phase Failed))"));
        assertThat(LockTestCluster.releases(registry, ReleaseReason.DANGLING)).isEqualTo(1);
        // A finished pod is not allocated.
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(LockTestCluster.allocations(registry, "success")).isZero();
    }

    @Test
    void malformedLockIsReportedAndClearedOnceOlderThanTheTimeoutFromFirstSight() {
        String malformed = "2025-06-01T10:00:00Z,team-a";
        cluster.setLock(NODE, malformed);
        AllocationController controller = cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() ->
                assertThat(cluster.events(AllocationController.REASON_LOCK_MALFORMED)).hasSize(1));
        Event warning = cluster.events(AllocationController.REASON_LOCK_MALFORMED).get(0);
        assertThat(warning.getType()).isEqualTo("Warning");
        assertThat(warning.getMessage()).isEqualTo("malformed lock annotation: expected 3 parts, got 2: \"" + malformed
                + "\"; the scheduler cannot bind GPU pods here; the agent clears it after PT5M");
        await().atMost(WAIT).untilAsserted(() -> assertThat(controller.snapshot().lockVerdict())
                .startsWith("malformed lock annotation: expected 3 parts, got 2"));

        // Exactly the timeout after first sight: still there, reported once.
        cluster.clock.advance(LockTestCluster.TIMEOUT);
        long passes = controller.snapshot().reapPasses();
        await().atMost(WAIT).until(() -> controller.snapshot().reapPasses() >= passes + 3);
        assertThat(cluster.lock(NODE)).isEqualTo(malformed);
        assertThat(cluster.events(AllocationController.REASON_LOCK_MALFORMED)).hasSize(1);

        cluster.clock.advance(Duration.ofSeconds(1));
        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.MALFORMED)).isEqualTo(1);
        assertThat(LockTestCluster.holdTime(registry).getCount()).as("no lock time to measure").isZero();
        assertThat(cluster.events(AllocationController.REASON_LOCK_RELEASED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains(": malformed (malformed lock annotation"));
    }
}
