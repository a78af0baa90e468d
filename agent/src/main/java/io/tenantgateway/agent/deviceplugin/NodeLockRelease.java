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
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.MalformedNodeLockException;
import io.tenantgateway.hami.NodeLock;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The allocator's release of the node lock after a pod's allocation completed or failed: only when the lock names
 * that pod ({@link LockPolicy#afterAllocation}), by HAMi's merge patch setting the key to null with the node's
 * resourceVersion, re-read and retried with HAMi's backoff; then the {@code NodeLockReleased} Event and the metrics.
 *
 * <p>Blocks on API calls and on HAMi's waits between attempts (the device plugin's call thread, or the failure
 * queue's worker); not thread-safe beyond that (the allocator calls it under its decisions lock).
 */
final class NodeLockRelease {
    /** The allocator's log category, as before this part was split out of it. */
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    private final KubernetesClient client;
    private final String node;
    private final Backoff retry;
    private final LockPolicy policy;
    private final LockMetrics metrics;
    private final EventRecorder events;
    private final Clock clock;
    private final Random random = new Random();

    /** @param retry HAMi's node-lock backoff ({@link AllocatorConfig#retry()}) */
    NodeLockRelease(KubernetesClient client, String node, Backoff retry, LockPolicy policy, LockMetrics metrics,
            EventRecorder events, Clock clock) {
        this.client = requireNonNull(client, "client");
        this.node = requireNonNull(node, "node");
        this.retry = requireNonNull(retry, "retry");
        this.policy = requireNonNull(policy, "policy");
        this.metrics = requireNonNull(metrics, "metrics");
        this.events = requireNonNull(events, "events");
        this.clock = requireNonNull(clock, "clock");
    }

    /** The owner check the release applies. */
    LockPolicy policy() {
        return policy;
    }

    /**
     * Releases the node lock when, and only when, it names {@code pod}. What is left after the last attempt the lock
     * controller's reaper releases (the holder is then success/failed).
     *
     * @return the API's last answer when the lock may still be the pod's after HAMi's tries (a retryable error),
     *     else {@code null} (released, not the pod's, or an error a retry does not mend)
     */
    KubernetesClientException release(Pod pod, ReleaseReason reason) {
        for (int attempt = 1; ; attempt++) {
            Node current;
            try {
                current = client.nodes().withName(node).get();
            } catch (KubernetesClientException e) {
                if (!ApiErrors.retryable(e)) {
                    return null;
                }
                if (!waitBeforeRetry(attempt, "read node " + node, e)) {
                    return e;
                }
                continue;
            }
            if (current == null) {
                log.warn("node {} not found while releasing its lock", node);
                return null;
            }
            String value = Annotations.get(current.getMetadata().getAnnotations(), Annotations.NODE_LOCK);
            LockDecision decision = policy.afterAllocation(value, pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName(), reason);
            if (!(decision instanceof LockDecision.Release release)) {
                if (value != null) {
                    log.info("node lock kept node={} pod={}: {}", node, PodPatcher.key(pod), decision.detail());
                }
                return null;
            }
            try {
                Node patched = client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                        MergePatch.annotations(current.getMetadata().getResourceVersion(),
                                Collections.singletonMap(Annotations.NODE_LOCK, null)));
                released(patched, value, release);
                return null;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404 || !ApiErrors.retryable(e)) {
                    return null;
                }
                if (!waitBeforeRetry(attempt, "release the lock of " + node, e)) {
                    return e;
                }
            }
        }
    }

    /** After the lock {@code value} was removed from the node ({@code patched}): the metrics, a log line, the Event. */
    void released(Node patched, String value, LockDecision.Release decision) {
        Duration held = null;
        try {
            held = Duration.between(NodeLock.parse(value).lockedAt(), clock.instant());
        } catch (MalformedNodeLockException e) {
            // the owner check accepted it, so it parses; nothing to measure otherwise
        }
        String reason = decision.reason().label();
        metrics.released(decision.reason(), held);
        log.info("node lock released node={} value=\"{}\" reason={} held={}: {}", node, value, reason, held,
                decision.detail());
        events.record(patched, EventRecorder.NORMAL, LockPolicy.REASON_LOCK_RELEASED, "released "
                + Annotations.NODE_LOCK + " \"" + value + "\": " + reason + " (" + decision.detail() + ")");
    }

    /** Waits HAMi's backoff before the next attempt; false (logged) when no attempt is left. */
    private boolean waitBeforeRetry(int attempt, String what, KubernetesClientException e) {
        if (!retry.hasNext(attempt)) {
            log.info("could not {} after {} attempts ({}); a failed pod's release waits for the API (retried with"
                    + " backoff), and the lock controller's reaper releases a lock whose holder is allocated or failed",
                    what, attempt, ApiErrors.describe(e));
            return false;
        }
        Duration wait = retry.delayAfter(attempt, random.nextDouble());
        log.debug("{} failed (attempt {}, {}), retrying in {}", what, attempt, ApiErrors.describe(e), wait);
        try {
            // HAMi waits between lock writes inside its synchronous Allocate; this is the plugin's call thread.
            TimeUnit.NANOSECONDS.sleep(wait.toNanos());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return false;
        }
        return true;
    }
}
