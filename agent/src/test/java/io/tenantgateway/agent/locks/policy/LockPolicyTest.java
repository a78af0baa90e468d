package io.tenantgateway.agent.locks.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.NodeLock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockPolicyTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final Instant LOCKED_AT = Instant.parse("2025-03-04T05:00:00Z");
    private static final String VALUE = "2025-03-04T05:00:00Z,ns,p1";
    private static final String NODE = "node-a";

    private final LockPolicy complete = new LockPolicy(TIMEOUT, true);
    private final LockPolicy observe = new LockPolicy(TIMEOUT, false);
    private final NodeLock lock = NodeLock.heldBy(LOCKED_AT, "ns", "p1");
    private final Instant fresh = LOCKED_AT.plusSeconds(10);

    @Test
    void releasesOnlyTheCompletedPodsOwnLock() {
        assertThat(complete.afterAllocation(VALUE, "ns", "p1", ReleaseReason.ALLOCATED))
                .isEqualTo(new LockDecision.Release(ReleaseReason.ALLOCATED, "allocation of ns/p1 completed"));
        assertThat(complete.afterAllocation(VALUE, "ns", "p1", ReleaseReason.FAILED))
                .isEqualTo(new LockDecision.Release(ReleaseReason.FAILED, "allocation of ns/p1 failed"));
    }

    @Test
    void neverReleasesAnotherPodsLockAfterAllocation() {
        assertThat(complete.afterAllocation(VALUE, "ns", "p2", ReleaseReason.ALLOCATED))
                .isEqualTo(new LockDecision.Keep("lock is held by ns/p1, not ns/p2"));
        assertThat(complete.afterAllocation(VALUE, "other", "p1", ReleaseReason.ALLOCATED)).isInstanceOf(LockDecision.Keep.class);
        // HAMi's HasSuffix("ns,p1") would match pod "xp1"'s lock as well; the exact holder is compared here.
        assertThat(complete.afterAllocation("2025-03-04T05:00:00Z,ns,xp1", "ns", "p1", ReleaseReason.ALLOCATED))
                .isInstanceOf(LockDecision.Keep.class);
    }

    @Test
    void afterAllocationKeepsAbsentLegacyAndMalformedValues() {
        assertThat(complete.afterAllocation(null, "ns", "p1", ReleaseReason.ALLOCATED))
                .isEqualTo(new LockDecision.Keep("no lock on the node"));
        assertThat(complete.afterAllocation("2025-03-04T05:00:00Z", "ns", "p1", ReleaseReason.ALLOCATED))
                .isInstanceOf(LockDecision.Keep.class);
        assertThat(complete.afterAllocation("a,b", "ns", "p1", ReleaseReason.ALLOCATED))
                .isEqualTo(new LockDecision.Keep("lock \"a,b\" is malformed, not ns/p1's"));
    }

    @Test
    void afterAllocationOnlyForAllocatedOrFailed() {
        assertThatThrownBy(() -> complete.afterAllocation(VALUE, "ns", "p1", ReleaseReason.EXPIRED))
                .hasMessage("reason: EXPIRED (expected: ALLOCATED or FAILED)");
    }

    @Test
    void expiryIsStrictlyOlderThanTheTimeout() {
        LockHolder inProgress = LockHolder.of("", "Pending", "allocating", NODE);

        assertThat(complete.judge(lock, inProgress, LOCKED_AT.plus(TIMEOUT))).isInstanceOf(LockDecision.Keep.class);
        LockDecision decision = complete.judge(lock, inProgress, LOCKED_AT.plus(TIMEOUT).plusSeconds(1));
        assertThat(decision).isInstanceOf(LockDecision.Release.class);
        assertThat(((LockDecision.Release) decision).reason()).isEqualTo(ReleaseReason.EXPIRED);
        assertThat(decision.detail()).isEqualTo("taken at 2025-03-04T05:00:00Z, older than PT5M (holder ns/p1)");
    }

    @Test
    void readsTheLockTimeWithSecondsOrNanoseconds() throws Exception {
        // HAMi v2.10 and earlier write RFC3339 seconds, later releases RFC3339 with nanoseconds.
        LockHolder inProgress = LockHolder.of("", "Pending", "allocating", NODE);
        NodeLock seconds = NodeLock.parse("2026-12-07T20:45:34Z,ns,p1");
        NodeLock nanos = NodeLock.parse("2026-12-07T20:45:34.123456789Z,ns,p1");
        Instant expiry = Instant.parse("2026-12-07T20:50:34.123456789Z");

        assertThat(complete.judge(seconds, inProgress, expiry)).isInstanceOf(LockDecision.Release.class);
        assertThat(complete.judge(nanos, inProgress, expiry)).isInstanceOf(LockDecision.Keep.class);
        assertThat(reason(complete.judge(nanos, inProgress, expiry.plusNanos(1)))).isEqualTo(ReleaseReason.EXPIRED);
        for (String value : List.of("2026-12-07T20:45:34Z,ns,p1", "2026-12-07T20:45:34.123456789Z,ns,p1")) {
            assertThat(complete.afterAllocation(value, "ns", "p1", ReleaseReason.ALLOCATED))
                    .isEqualTo(new LockDecision.Release(ReleaseReason.ALLOCATED, "allocation of ns/p1 completed"));
        }
    }

    @Test
    void legacyLockWithoutHolderOnlyExpires() throws Exception {
        NodeLock legacy = NodeLock.parse("2025-03-04T05:00:00Z");

        assertThat(complete.judge(legacy, null, fresh)).isEqualTo(new LockDecision.Keep("held by - since 2025-03-04T05:00:00Z"));
        assertThat(reason(complete.judge(legacy, null, LOCKED_AT.plus(Duration.ofMinutes(6))))).isEqualTo(ReleaseReason.EXPIRED);
    }

    @Test
    void danglingWhenTheHolderIsGoneFinishedOrBoundElsewhere() {
        assertThat(complete.judge(lock, LockHolder.gone(), fresh))
                .isEqualTo(new LockDecision.Release(ReleaseReason.DANGLING, "holder ns/p1 no longer exists"));
        assertThat(complete.judge(lock, LockHolder.of(NODE, "Succeeded", "allocating", NODE), fresh))
                .isEqualTo(new LockDecision.Release(ReleaseReason.DANGLING, "holder ns/p1 has finished (phase Succeeded)"));
        assertThat(complete.judge(lock, LockHolder.of(NODE, "Failed", "", NODE), fresh))
                .isEqualTo(new LockDecision.Release(ReleaseReason.DANGLING, "holder ns/p1 has finished (phase Failed)"));
        assertThat(complete.judge(lock, LockHolder.of("node-b", "Pending", "allocating", NODE), fresh))
                .isEqualTo(new LockDecision.Release(ReleaseReason.DANGLING, "holder ns/p1 is bound to node node-b"));
        // The scheduler's rules too, so observe mode applies them as well.
        assertThat(reason(observe.judge(lock, LockHolder.gone(), fresh))).isEqualTo(ReleaseReason.DANGLING);
    }

    @Test
    void keepsAFreshLockWhoseBindOrAllocationIsInProgress() {
        assertThat(complete.judge(lock, LockHolder.of("", "Pending", "", NODE), fresh))
                .isEqualTo(new LockDecision.Keep("held by ns/p1 since 2025-03-04T05:00:00Z (NOT_BOUND)"));
        assertThat(complete.judge(lock, LockHolder.of(NODE, "Pending", "allocating", NODE), fresh))
                .isInstanceOf(LockDecision.Keep.class);
        // An unbound holder whose previous Bind failed still has bind-phase failed: never judged "failed".
        assertThat(complete.judge(lock, LockHolder.of("", "Pending", "failed", NODE), fresh))
                .isInstanceOf(LockDecision.Keep.class);
    }

    @Test
    void completeModeFinishesReleasesOfHoldersAllocatedHere() {
        assertThat(complete.judge(lock, LockHolder.of(NODE, "Pending", "success", NODE), fresh))
                .isEqualTo(new LockDecision.Release(ReleaseReason.ALLOCATED, "holder ns/p1 is allocated (bind-phase success)"));
        assertThat(reason(complete.judge(lock, LockHolder.of(NODE, "Running", "failed", NODE), fresh)))
                .isEqualTo(ReleaseReason.FAILED);
        // In observe mode the device plugin owns that release.
        assertThat(observe.judge(lock, LockHolder.of(NODE, "Pending", "success", NODE), fresh)).isInstanceOf(LockDecision.Keep.class);
    }

    @Test
    void malformedValueIsClearedOnlyAfterTheTimeoutFromFirstSight() {
        Instant firstSeen = Instant.parse("2025-03-04T06:00:00Z");
        String problem = "malformed lock annotation: expected 3 parts, got 2";

        LockDecision early = complete.judgeMalformed("a,b", problem, firstSeen, firstSeen.plus(TIMEOUT));
        assertThat(early).isEqualTo(new LockDecision.Keep(problem
                + "; value \"a,b\" first seen at 2025-03-04T06:00:00Z, cleared once older than PT5M"));
        LockDecision late = complete.judgeMalformed("a,b", problem, firstSeen, firstSeen.plus(TIMEOUT).plusMillis(1));
        assertThat(reason(late)).isEqualTo(ReleaseReason.MALFORMED);
        assertThat(reason(observe.judgeMalformed("a,b", problem, firstSeen, firstSeen.plus(Duration.ofHours(1)))))
                .isEqualTo(ReleaseReason.MALFORMED);
    }

    @Test
    void classifiesHolders() {
        assertThat(LockHolder.of(null, null, null, NODE)).isEqualTo(new LockHolder(LockHolder.State.NOT_BOUND, "", "", ""));
        assertThat(LockHolder.of(NODE, "Running", "success", NODE).state()).isEqualTo(LockHolder.State.BOUND_HERE);
        assertThat(LockHolder.of("node-b", "Running", "", NODE).state()).isEqualTo(LockHolder.State.BOUND_ELSEWHERE);
        assertThat(LockHolder.of("", "Failed", "", NODE).state()).isEqualTo(LockHolder.State.FINISHED);
    }

    @Test
    void rejectsANonPositiveTimeout() {
        assertThatThrownBy(() -> new LockPolicy(Duration.ZERO, true)).hasMessage("timeout: PT0S (expected: > 0)");
    }

    private static ReleaseReason reason(LockDecision decision) {
        assertThat(decision).isInstanceOf(LockDecision.Release.class);
        return ((LockDecision.Release) decision).reason();
    }
}
