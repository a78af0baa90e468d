package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.LockDecision;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.hami.Annotations;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles a failed allocation: {@code bind-phase=failed}, a Warning {@code GPUAllocationFailed} Event and the pod's
 * own node lock released. What the API does not take at once (a server error, throttling, no answer, conflicts beyond
 * HAMi's tries) waits in a {@link FailureBookkeeping}: one record per pod, retried with
 * {@link AllocatorConfig#failureRetry()} until the API answers, then written (or dropped when the pod is gone,
 * re-bound or decided otherwise, or the lock is no longer its own). A failure from before the pod was read is
 * attributed first, to the pod Allocate's step 1 serves by then.
 *
 * <p>Threading: {@link #fail} runs on the caller's thread under the decisions lock; the deferred attempts run on the
 * bookkeeping queue's worker and take the same lock, so they never interleave with an allocation.
 *
 * <p>Lifecycle: {@link #start()} starts the bookkeeping queue (without it a deferred failure is only logged);
 * {@link #close()} stops it.
 */
final class FailureSettlement implements AutoCloseable {
    /** The allocator's log category, as before this part was split out of it. */
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final KubernetesClient client;
    private final AllocatorConfig config;
    private final String node;
    private final PendingPodFinder finder;
    private final PodPatcher pods;
    private final NodeLockRelease locks;
    private final EventRecorder events;
    private final LockMetrics metrics;
    private final ReentrantLock decisions;
    private final Clock clock;
    private final FailureBookkeeping bookkeeping;

    FailureSettlement(KubernetesClient client, AllocatorConfig config, PendingPodFinder finder, PodPatcher pods,
            NodeLockRelease locks, EventRecorder events, LockMetrics metrics, ReentrantLock decisions, Clock clock) {
        this.client = requireNonNull(client, "client");
        this.config = requireNonNull(config, "config");
        this.node = config.nodeName();
        this.finder = requireNonNull(finder, "finder");
        this.pods = requireNonNull(pods, "pods");
        this.locks = requireNonNull(locks, "locks");
        this.events = requireNonNull(events, "events");
        this.metrics = requireNonNull(metrics, "metrics");
        this.decisions = requireNonNull(decisions, "decisions");
        this.clock = requireNonNull(clock, "clock");
        this.bookkeeping = new FailureBookkeeping(node, this::attempt, config.failureRetry(),
                config.pendingFailureLimit(), metrics, clock);
    }

    /** Starts the queue that writes what the API did not take at once. Idempotent. */
    void start() {
        bookkeeping.start();
    }

    /** Stops that queue (what is pending is dropped and logged). Idempotent. */
    @Override
    public void close() {
        bookkeeping.close();
    }

    /** Pods whose failure waits for the API. */
    List<String> pendingPods() {
        return bookkeeping.pendingPods();
    }

    /**
     * Step 1 itself got no answer: nothing is known about the pod, so a retryable failure waits for the API and is
     * attributed then by step 1's own rule; any other is only logged.
     *
     * @param why the error text kubelet gets
     */
    void beforeThePod(String why, List<String> deviceIds, KubernetesClientException e) {
        if (ApiErrors.retryable(e)) {
            bookkeeping.defer(FailureBookkeeping.Pending.unattributed(why, deviceIds, clock.instant()), e);
        } else {
            log.warn("Allocate refused node={}: {}", node, why);
        }
    }

    /**
     * {@code failed}, a Warning Event, the pod's own lock released; what the API does not take waits.
     *
     * @param byLock whether the node lock named {@code pod} when it was found
     * @param reason why; bounded here (it may quote annotations) for the log, the Event and the bookkeeping
     */
    void fail(Pod pod, boolean byLock, List<String> deviceIds, String reason) {
        String why = PeerText.bound(reason);
        Pod failed = pod;
        for (int attempt = 1; ; attempt++) {
            try {
                failed = pods.patch(failed, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_FAILED));
                break;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    log.info("pod deleted mid-allocation pod={} node={}", PodPatcher.key(pod), node);
                    return;
                }
                if (ApiErrors.retryable(e) && (e.getCode() != 409 || !config.retry().hasNext(attempt))) {
                    bookkeeping.defer(pending(pod, byLock, FailureBookkeeping.Stage.PHASE, deviceIds, why), e);
                    return;
                }
                if (e.getCode() != 409) {
                    log.warn("cannot set {}=failed on pod={} node={}: {}", Annotations.POD_BIND_PHASE,
                            PodPatcher.key(pod), node, ApiErrors.describe(e));
                    break;
                }
                try {
                    failed = finder.reread(failed);
                } catch (KubernetesClientException reread) {
                    if (ApiErrors.retryable(reread)) {
                        bookkeeping.defer(pending(pod, byLock, FailureBookkeeping.Stage.PHASE, deviceIds, why),
                                reread);
                        return;
                    }
                    log.warn("cannot re-read pod={} node={} to set {}=failed: {}", PodPatcher.key(pod), node,
                            Annotations.POD_BIND_PHASE, ApiErrors.describe(reread));
                    break;
                }
            }
        }
        metrics.allocation(LockMetrics.Allocation.FAILED);
        log.warn("allocation failed pod={} node={} reason=\"{}\"", PodPatcher.key(pod), node, why);
        events.record(failed, EventRecorder.WARNING, HamiAllocator.REASON_ALLOCATION_FAILED, why);
        KubernetesClientException unreleased = locks.release(failed, ReleaseReason.FAILED);
        if (unreleased != null) {
            bookkeeping.defer(pending(failed, byLock, FailureBookkeeping.Stage.RELEASE, deviceIds, why), unreleased);
        }
    }

    private FailureBookkeeping.Pending pending(Pod pod, boolean byLock, FailureBookkeeping.Stage stage,
            List<String> deviceIds, String why) {
        var metadata = pod.getMetadata();
        return new FailureBookkeeping.Pending(PodPatcher.key(pod), metadata.getUid(),
                Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_TIME), byLock, stage, why, deviceIds,
                clock.instant());
    }

    // ---------------------------------------------------------------- deferred

    /**
     * One attempt of a failure's bookkeeping the API did not take (on the bookkeeping queue's worker, under the same
     * lock as Allocate); an API error is thrown for the queue to retry with the backoff.
     */
    FailureBookkeeping.Outcome attempt(FailureBookkeeping.Pending failure) {
        decisions.lock();
        try {
            return failure.podKey == null ? attribute(failure) : settle(failure);
        } finally {
            decisions.unlock();
        }
    }

    /**
     * A failure from before the pod was read belongs to the pod Allocate's own step 1 serves now — the lock's holder,
     * else HAMi's pending pod — when that pod is still {@code allocating} and was bound before the failure (a pod bound
     * since cannot have been the one kubelet was admitting).
     */
    private FailureBookkeeping.Outcome attribute(FailureBookkeeping.Pending failure) {
        Duration age = Duration.between(failure.failedAt, clock.instant());
        if (age.compareTo(LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT) > 0) {
            return new FailureBookkeeping.Outcome.Dropped("older than the node lock timeout ("
                    + LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT + "): the scheduler may have locked the node for"
                    + " another pod since");
        }
        PendingPodFinder.Found found;
        try {
            found = finder.find();
        } catch (AllocationException e) {
            return new FailureBookkeeping.Outcome.Dropped("no pod Allocate would serve now: " + e.getMessage());
        }
        Pod pod = found.pod();
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String phase = Annotations.get(annotations, Annotations.POD_BIND_PHASE);
        if (!Annotations.BIND_PHASE_ALLOCATING.equals(phase)) {
            return new FailureBookkeeping.Outcome.Dropped("pod " + PodPatcher.key(pod) + ", the one Allocate serves"
                    + " now, is " + Annotations.POD_BIND_PHASE + "=" + phase + ", not allocating");
        }
        String bindTime = Annotations.get(annotations, Annotations.POD_BIND_TIME);
        long boundAt;
        try {
            boundAt = bindTime == null ? Long.MAX_VALUE : Long.parseLong(bindTime.strip());
        } catch (NumberFormatException e) {
            boundAt = Long.MAX_VALUE;
        }
        if (boundAt > failure.failedAt.getEpochSecond()) {
            return new FailureBookkeeping.Outcome.Dropped("pod " + PodPatcher.key(pod) + ", the one Allocate serves"
                    + " now, was bound (" + Annotations.POD_BIND_TIME + " " + bindTime + ") after the failure at "
                    + failure.failedAt);
        }
        failure.podKey = PodPatcher.key(pod);
        failure.uid = pod.getMetadata().getUid();
        failure.bindTime = bindTime;
        failure.lockHeld = found.byLock();
        return new FailureBookkeeping.Outcome.Attributed();
    }

    /** Writes what is left of a known pod's failure: {@code failed}, the Warning Event, the own lock's release. */
    private FailureBookkeeping.Outcome settle(FailureBookkeeping.Pending failure) {
        int slash = failure.podKey.indexOf('/');
        String namespace = failure.podKey.substring(0, slash);
        String name = failure.podKey.substring(slash + 1);
        Pod pod = client.pods().inNamespace(namespace).withName(name).get();
        String moot = moot(failure, pod);
        if (moot != null) {
            return new FailureBookkeeping.Outcome.Dropped(moot);
        }
        LockPolicy lockPolicy = locks.policy();
        if (failure.stage == FailureBookkeeping.Stage.PHASE) {
            if (failure.lockHeld) {
                Node current = client.nodes().withName(node).get();
                String value = current == null ? null
                        : Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
                if (value != null && !(lockPolicy.afterAllocation(value, namespace, name, ReleaseReason.FAILED)
                        instanceof LockDecision.Release)) {
                    return new FailureBookkeeping.Outcome.Dropped("the node lock is no longer its own (\"" + value
                            + "\"): the scheduler has moved on");
                }
            }
            try {
                pod = pods.patch(pod, Map.of(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_FAILED));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return new FailureBookkeeping.Outcome.Dropped("pod deleted");
                }
                throw e; // a conflict re-reads and judges again on the next attempt
            }
            metrics.allocation(LockMetrics.Allocation.FAILED); // logged once written (FailureBookkeeping)
            failure.stage = FailureBookkeeping.Stage.EVENT;
        }
        if (failure.stage == FailureBookkeeping.Stage.EVENT) {
            try {
                events.create(pod, EventRecorder.WARNING, HamiAllocator.REASON_ALLOCATION_FAILED, failure.why);
            } catch (KubernetesClientException e) {
                if (ApiErrors.retryable(e)) {
                    throw e;
                }
                log.warn("event not recorded pod={} reason={}: {}", failure.podKey,
                        HamiAllocator.REASON_ALLOCATION_FAILED, ApiErrors.describe(e));
            }
            failure.stage = FailureBookkeeping.Stage.RELEASE;
        }
        String written = "bind-phase=failed, Warning " + HamiAllocator.REASON_ALLOCATION_FAILED;
        Node current = client.nodes().withName(node).get();
        if (current == null) {
            return new FailureBookkeeping.Outcome.Written(written + "; node " + node + " not found");
        }
        String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
        LockDecision decision = lockPolicy.afterAllocation(value, namespace, name, ReleaseReason.FAILED);
        if (!(decision instanceof LockDecision.Release release)) {
            return new FailureBookkeeping.Outcome.Written(written + "; node lock kept: " + decision.detail());
        }
        Node patched;
        try {
            patched = client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                    MergePatch.annotations(current.getMetadata().getResourceVersion(),
                            Collections.singletonMap(Annotations.NODE_LOCK, null)));
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return new FailureBookkeeping.Outcome.Written(written + "; node " + node + " not found");
            }
            throw e; // a conflict re-reads the node and judges the lock again
        }
        locks.released(patched, value, release);
        return new FailureBookkeeping.Outcome.Written(written + ", node lock \"" + value + "\" released");
    }

    /** Why a pending failure no longer applies to {@code pod} as read now, or {@code null} when it does. */
    static String moot(FailureBookkeeping.Pending failure, Pod pod) {
        if (pod == null) {
            return "pod deleted";
        }
        var metadata = pod.getMetadata();
        if (failure.uid != null && !failure.uid.equals(metadata.getUid())) {
            return "pod re-created (uid " + metadata.getUid() + ", failed was " + failure.uid + ")";
        }
        String bindTime = Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_TIME);
        if (!Objects.equals(failure.bindTime, bindTime)) {
            return "pod re-bound (" + Annotations.POD_BIND_TIME + " " + bindTime + ", failed was " + failure.bindTime
                    + ")";
        }
        String phase = Annotations.get(metadata.getAnnotations(), Annotations.POD_BIND_PHASE);
        if (failure.stage == FailureBookkeeping.Stage.PHASE && !Annotations.BIND_PHASE_ALLOCATING.equals(phase)) {
            return "decided since: " + Annotations.POD_BIND_PHASE + "=" + phase;
        }
        return null;
    }
}
