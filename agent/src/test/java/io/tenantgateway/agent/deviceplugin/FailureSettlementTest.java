package io.tenantgateway.agent.deviceplugin;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.hami.Annotations;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Failure settlement against fabric8's mock API server (CRUD mode, loopback) behind an outage switch: at once, deferred
 * while the API refuses writes, and each deferred attempt called directly (attribute, settle, drop).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailureSettlementTest extends MockNodeTestBase {
    static final List<String> DEVICES = List.of("GPU-a-0");

    private FailureSettlement settlement;

    @BeforeEach
    void start() {
        AllocatorConfig config = AllocatorConfig.defaults(NODE).withPodFieldSelector(false)
                .withRetry(Backoff.hamiNodeLock(Duration.ofMillis(1)))
                .withFailureRetry(Backoff.exponential(Duration.ofMillis(10)).withCap(Duration.ofMillis(50)), 8);
        PendingPodFinder finder = new PendingPodFinder(client, NODE, false);
        NodeLockRelease locks = lockRelease(config.retry());
        settlement = new FailureSettlement(client, config, finder, new PodPatcher(client), locks, events, metrics,
                new ReentrantLock(), clock);
    }

    @AfterEach
    void stop() {
        settlement.close();
    }

    @Test
    void aFailureIsWrittenAtOnceFailedWarningAndTheOwnLockReleased() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        cluster.setLock("2026-12-07T20:45:34.5Z," + NS + ",p1");

        settlement.fail(pod, true, DEVICES, "device number not matched");

        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_FAILED);
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).singleElement().satisfies(e -> {
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getMessage()).isEqualTo("device number not matched");
        });
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.lockReleases(ReleaseReason.FAILED)).isEqualTo(1);
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "failed")).isEqualTo(1);
        assertThat(settlement.pendingPods()).isEmpty();
    }

    @Test
    void aFailureTheApiDoesNotTakeWaitsAndIsWrittenOnceItDoes() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        cluster.setLock("2026-12-07T20:45:34Z," + NS + ",p1");
        settlement.start();
        outage.writesDown();

        settlement.fail(pod, true, DEVICES, "device number not matched");

        assertThat(settlement.pendingPods()).containsExactly("team-a/p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_ALLOCATING);
        await().atMost(WAIT).until(() -> cluster.counter("tenant_gateway_allocation_bookkeeping", "result",
                "retried") > 0);
        outage.heal();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(settlement.pendingPods()).isEmpty();
            assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_FAILED);
            assertThat(cluster.lock()).isNull();
            assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).hasSize(1);
        });
    }

    @Test
    void aFailureBeforeThePodWasReadWaitsOnlyWhenTheApiMayStillAnswer() {
        settlement.beforeThePod("cannot find the pod", DEVICES, new KubernetesClientException("forbidden", 403,
                null));
        assertThat(settlement.pendingPods()).isEmpty();

        settlement.beforeThePod("cannot find the pod", DEVICES, new KubernetesClientException("timed out", 500,
                null));
        assertThat(settlement.pendingPods()).containsExactly(FailureBookkeeping.UNATTRIBUTED);
    }

    @Test
    void anUnattributedFailureGoesToThePodStepOneServesWhenItWasBoundBefore() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        FailureBookkeeping.Pending failure = FailureBookkeeping.Pending.unattributed("no answer", DEVICES, NOW);

        assertThat(settlement.attempt(failure)).isEqualTo(new FailureBookkeeping.Outcome.Attributed());
        assertThat(failure.podKey).isEqualTo("team-a/p1");
        assertThat(failure.uid).isEqualTo(pod.getMetadata().getUid());
        assertThat(failure.lockHeld).isFalse();

        assertThat(settlement.attempt(failure)).isInstanceOf(FailureBookkeeping.Outcome.Written.class);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_FAILED);
    }

    @Test
    void anUnattributedFailureIsNotPinnedOnAPodBoundAfterItOrOnAnOldOne() {
        PendingPodFinderTest.bound(client, "p1", Long.toString(NOW.getEpochSecond() + 10));

        assertThat(settlement.attempt(FailureBookkeeping.Pending.unattributed("no answer", DEVICES, NOW)))
                .isInstanceOf(FailureBookkeeping.Outcome.Dropped.class);
        assertThat(settlement.attempt(FailureBookkeeping.Pending.unattributed("no answer", DEVICES,
                NOW.minus(Duration.ofMinutes(6))))).isInstanceOf(FailureBookkeeping.Outcome.Dropped.class);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_ALLOCATING);
    }

    @Test
    void aDeferredFailureWhoseLockWentToAnotherPodIsDropped() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        cluster.setLock("2026-12-07T20:45:40Z," + NS + ",p2");
        FailureBookkeeping.Pending failure = new FailureBookkeeping.Pending("team-a/p1", pod.getMetadata().getUid(),
                "100", true, FailureBookkeeping.Stage.PHASE, "why", DEVICES, NOW);

        assertThat(settlement.attempt(failure)).isEqualTo(new FailureBookkeeping.Outcome.Dropped(
                "the node lock is no longer its own (\"2026-12-07T20:45:40Z,team-a,p2\"): the scheduler has moved on"));
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_ALLOCATING);
    }

    @Test
    void aDeferredFailureIsMootOnceThePodIsGoneRecreatedReboundOrDecided() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        String uid = pod.getMetadata().getUid();
        FailureBookkeeping.Pending failure = new FailureBookkeeping.Pending("team-a/p1", uid, "100", false,
                FailureBookkeeping.Stage.PHASE, "why", DEVICES, NOW);

        assertThat(FailureSettlement.moot(failure, pod)).isNull();
        assertThat(FailureSettlement.moot(failure, null)).isEqualTo("pod deleted");
        assertThat(FailureSettlement.moot(failure, new PodBuilder(pod).editMetadata().withUid("uid-new").endMetadata()
                .build())).isEqualTo("pod re-created (uid uid-new, failed was " + uid + ")");
        assertThat(FailureSettlement.moot(failure, new PodBuilder(pod).editMetadata()
                .addToAnnotations(Annotations.POD_BIND_TIME, "200").endMetadata().build()))
                .isEqualTo("pod re-bound (hami.io/bind-time 200, failed was 100)");
        Pod decided = new PodBuilder(pod).editMetadata()
                .addToAnnotations(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS).endMetadata().build();
        assertThat(FailureSettlement.moot(failure, decided)).isEqualTo("decided since: hami.io/bind-phase=success");
        failure.stage = FailureBookkeeping.Stage.RELEASE; // failed was written; only the release is left
        assertThat(FailureSettlement.moot(failure, decided)).isNull();
    }
}
