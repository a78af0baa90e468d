package io.tenantgateway.agent.locks.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import java.time.Duration;
import java.time.Instant;

/**
 * Pure decisions about HAMi's node lock: when the agent may remove {@code hami.io/mutex.lock} from
 * its node. Nothing here reads the API or the clock; callers pass what they observed.
 *
 * <p>Rules (shared/spec/hami.md, "Node lock"):
 * <ul>
 *   <li>After completing or failing a pod's allocation, release only a lock that names exactly
 *       that pod: never another pod's lock, never a legacy or malformed value.</li>
 *   <li>Stale locks: release one older than the timeout (strictly, like the scheduler), or whose
 *       holder is gone, finished, or bound to another node. In {@code complete} mode also one whose
 *       holder is bound here and already {@code success}/{@code failed} (an agent stopped between
 *       the pod write and the release).</li>
 *   <li>A malformed value is released only once it has been seen for longer than the timeout,
 *       measured from when this agent first saw it (it carries no usable time).</li>
 * </ul>
 */
public final class LockPolicy {
    /** HAMi's node-lock expiry (the scheduler's default), when the flags do not say otherwise. */
    public static final Duration DEFAULT_NODE_LOCK_TIMEOUT = Duration.ofMinutes(5);
    /** Event reason when the agent released a node lock. */
    public static final String REASON_LOCK_RELEASED = "NodeLockReleased";

    private final Duration timeout;
    private final boolean releaseCompletedHolders;

    /**
     * @param timeout the node-lock timeout (the scheduler's default is 5 minutes)
     * @param releaseCompletedHolders true in {@code complete} mode: the agent owns the allocation
     *        step, so it also finishes releases that a stopped agent left behind
     */
    public LockPolicy(Duration timeout, boolean releaseCompletedHolders) {
        requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        this.timeout = timeout;
        this.releaseCompletedHolders = releaseCompletedHolders;
    }

    public Duration timeout() {
        return timeout;
    }

    /** The scheduler's expiry rule: strictly older than the timeout. */
    public boolean isExpired(NodeLock lock, Instant now) {
        return Duration.between(lock.lockedAt(), now).compareTo(timeout) > 0;
    }

    /**
     * After {@code namespace/podName}'s allocation was completed ({@link ReleaseReason#ALLOCATED}) or
     * failed ({@link ReleaseReason#FAILED}): release only when the lock names that pod.
     *
     * @param lockValue the current annotation value, {@code null} when absent
     */
    public LockDecision afterAllocation(String lockValue, String namespace, String podName, ReleaseReason reason) {
        requireNonNull(namespace, "namespace");
        requireNonNull(podName, "podName");
        if (reason != ReleaseReason.ALLOCATED && reason != ReleaseReason.FAILED) {
            throw new IllegalArgumentException("reason: " + reason + " (expected: ALLOCATED or FAILED)");
        }
        if (lockValue == null) {
            return new LockDecision.Keep("no lock on the node");
        }
        NodeLock lock;
        try {
            lock = NodeLock.parse(lockValue);
        } catch (MalformedNodeLockException e) {
            return new LockDecision.Keep("lock " + PeerText.quote(lockValue) + " is malformed, not " + namespace + "/"
                    + podName + "'s");
        }
        if (!lock.isHeldBy(namespace, podName)) {
            return new LockDecision.Keep("lock is held by " + lock.holder() + ", not " + namespace + "/" + podName);
        }
        return new LockDecision.Release(reason, "allocation of " + namespace + "/" + podName + " "
                + (reason == ReleaseReason.ALLOCATED ? "completed" : "failed"));
    }

    /**
     * Judges a well-formed lock.
     *
     * @param holder what the API says about the named pod; {@code null} for a legacy lock (no pod)
     */
    public LockDecision judge(NodeLock lock, LockHolder holder, Instant now) {
        requireNonNull(lock, "lock");
        requireNonNull(now, "now");
        if (holder != null && holder.state() == LockHolder.State.BOUND_HERE && releaseCompletedHolders) {
            if (Annotations.BIND_PHASE_SUCCESS.equals(holder.bindPhase())) {
                return new LockDecision.Release(ReleaseReason.ALLOCATED,
                        "holder " + lock.holder() + " is allocated (bind-phase success)");
            }
            if (Annotations.BIND_PHASE_FAILED.equals(holder.bindPhase())) {
                return new LockDecision.Release(ReleaseReason.FAILED,
                        "holder " + lock.holder() + " failed allocation (bind-phase failed)");
            }
        }
        if (isExpired(lock, now)) {
            return new LockDecision.Release(ReleaseReason.EXPIRED, "taken at " + lock.lockedAt()
                    + ", older than " + timeout + " (holder " + lock.holder() + ")");
        }
        if (holder != null) {
            switch (holder.state()) {
                case GONE:
                    return new LockDecision.Release(ReleaseReason.DANGLING,
                            "holder " + lock.holder() + " no longer exists");
                case FINISHED:
                    return new LockDecision.Release(ReleaseReason.DANGLING,
                            "holder " + lock.holder() + " has finished (phase " + holder.podPhase() + ")");
                case BOUND_ELSEWHERE:
                    return new LockDecision.Release(ReleaseReason.DANGLING,
                            "holder " + lock.holder() + " is bound to node " + holder.nodeName());
                default:
                    break;
            }
        }
        return new LockDecision.Keep("held by " + lock.holder() + " since " + lock.lockedAt()
                + (holder == null ? "" : " (" + holder.state() + ")"));
    }

    /**
     * Judges a value that does not parse.
     *
     * @param firstSeen when this agent first saw exactly this value
     */
    public LockDecision judgeMalformed(String value, String problem, Instant firstSeen, Instant now) {
        requireNonNull(value, "value");
        requireNonNull(firstSeen, "firstSeen");
        requireNonNull(now, "now");
        if (Duration.between(firstSeen, now).compareTo(timeout) > 0) {
            return new LockDecision.Release(ReleaseReason.MALFORMED, problem + "; value " + PeerText.quote(value)
                    + " first seen at " + firstSeen + ", older than " + timeout);
        }
        return new LockDecision.Keep(problem + "; value " + PeerText.quote(value) + " first seen at " + firstSeen
                + ", cleared once older than " + timeout);
    }
}
