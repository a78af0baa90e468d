package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.agent.controller.WorkQueue;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.text.PeerText;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.health.LockMetrics;

/**
 * The failed allocations whose bookkeeping the API did not take (shared/spec/device-plugin.md §2 step 8:
 * {@code bind-phase=failed}, a Warning Event, the pod's own node lock released): one pending record per pod, retried
 * level-triggered on a {@link WorkQueue} with a {@link Backoff} until written, or dropped when moot (the pod gone or
 * re-created, re-bound, decided otherwise, or the lock no longer its own). Without it a failed Allocate during an API
 * outage left the pod {@code allocating} and the node locked until HAMi's 5-minute expiry.
 *
 * <p>A failure before the pod could even be read (the node's lock unreadable) is kept under {@link #UNATTRIBUTED} and,
 * once the API answers, attributed to the pod Allocate's own rule would have served (the lock's holder, else HAMi's
 * pending pod), only when that pod is still {@code allocating} and was bound before the failure.
 *
 * <p>Bounded: at most {@code limit} pods wait at once (a count, not bytes; a record is a few hundred bytes); a
 * failure beyond it is logged and counted {@code overflow}, and the lock controller's reaper and HAMi's expiry remain.
 *
 * <p>Logging: WARN once per pod when its bookkeeping cannot be written, INFO when it is written (or dropped) after
 * the API answered again; the attempts in between are DEBUG (the queue's).
 *
 * <p>Threading: {@link #defer} from the device plugin's call thread; every attempt on the queue's worker thread.
 * Records are guarded by {@code this}; the {@link Writer} serializes attempts with Allocate calls itself.
 */
final class FailureBookkeeping extends Lifecycle {
    /** The key of a failure whose pod is not known yet (a pod key always has a {@code /}). */
    static final String UNATTRIBUTED = "(pod not read)";
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final Logger log = LoggerFactory.getLogger(FailureBookkeeping.class);

    /** How far one pod's bookkeeping got. */
    enum Stage { PHASE, EVENT, RELEASE }

    /** One failed allocation waiting for the API. Owned by the queue's worker once deferred. */
    static final class Pending {
        final Instant failedAt;
        final String why;
        final List<String> deviceIds;
        String podKey;
        String uid;
        String bindTime;
        boolean lockHeld;
        Stage stage;
        int attempts;
        String lastError = "";

        /** A failure of a known pod, from {@code stage} on. */
        Pending(String podKey, String uid, String bindTime, boolean lockHeld, Stage stage, String why,
                List<String> deviceIds, Instant failedAt) {
            this.podKey = podKey;
            this.uid = uid;
            this.bindTime = bindTime;
            this.lockHeld = lockHeld;
            this.stage = requireNonNull(stage, "stage");
            this.why = requireNonNull(why, "why");
            this.deviceIds = List.copyOf(deviceIds);
            this.failedAt = requireNonNull(failedAt, "failedAt");
        }

        /** A failure before the pod was read. */
        static Pending unattributed(String why, List<String> deviceIds, Instant failedAt) {
            return new Pending(null, null, null, false, Stage.PHASE, why, deviceIds, failedAt);
        }

        String key() {
            return podKey == null ? UNATTRIBUTED : podKey;
        }
    }

    /** What one attempt came to. */
    sealed interface Outcome {
        /** Everything written; {@code detail} says what. */
        record Written(String detail) implements Outcome { }

        /** Nothing (more) to write: {@code why}. */
        record Dropped(String why) implements Outcome { }

        /** An unattributed failure now belongs to {@code pending.podKey}. */
        record Attributed() implements Outcome { }
    }

    /** Does one attempt against the API; throws what the API answered to retry. */
    interface Writer {
        Outcome attempt(Pending pending);
    }

    private final String node;
    private final Writer writer;
    private final LockMetrics metrics;
    private final Clock clock;
    private final int limit;
    private final Duration firstInterval;
    private final WorkQueue<String> queue;
    private final Map<String, Pending> pending = new LinkedHashMap<>(); // guarded by this

    FailureBookkeeping(String node, Writer writer, Backoff backoff, int limit, LockMetrics metrics, Clock clock) {
        super("allocation failure bookkeeping for node " + requireNonNull(node, "node"));
        this.node = node;
        this.writer = requireNonNull(writer, "writer");
        this.metrics = requireNonNull(metrics, "metrics");
        this.clock = requireNonNull(clock, "clock");
        this.limit = limit;
        this.firstInterval = backoff.initialInterval();
        this.queue = new WorkQueue<>(name(), "allocation-failures-" + node, this::reconcile,
                requireNonNull(backoff, "backoff"), CLOSE_TIMEOUT);
    }

    @Override
    protected void doStart() {
        queue.start();
    }

    /** Drops what is pending (the successor's lock controller and HAMi's expiry remain). */
    @Override
    protected void doClose() {
        queue.close();
        synchronized (this) {
            if (!pending.isEmpty()) {
                log.warn("allocation failure bookkeeping not written for pods={} node={}: agent stopping",
                        pending.keySet(), node);
            }
            pending.clear();
        }
        metrics.bookkeepingPending(0);
    }

    /**
     * Keeps {@code failure} until the API takes it (WARN once per pod). A pod already waiting keeps its first record;
     * a full set refuses it (counted {@code overflow}).
     */
    void defer(Pending failure, KubernetesClientException cause) {
        String key = failure.key();
        int size;
        synchronized (this) {
            if (pending.containsKey(key)) {
                log.debug("allocation failure of pod={} already waiting for the API node={}", key, node);
                return;
            }
            if (pending.size() >= limit) {
                metrics.bookkeeping(LockMetrics.Bookkeeping.OVERFLOW);
                log.warn("allocation failure of pod={} node={} not kept: {} pods already wait for the API (the limit);"
                        + " its lock waits for the lock controller or HAMi's expiry: {}", key, node, limit,
                        failure.why);
                return;
            }
            pending.put(key, failure);
            size = pending.size();
        }
        failure.lastError = describe(cause);
        metrics.bookkeeping(LockMetrics.Bookkeeping.DEFERRED);
        metrics.bookkeepingPending(size);
        log.warn("allocation failure of pod={} node={} not written: the API answered {}; bind-phase stays {} and {}"
                + " until it answers again (retried with backoff): {}", key, node, failure.lastError,
                failure.stage == Stage.RELEASE ? "failed" : "allocating", failure.lockHeld || failure.podKey == null
                        ? "the node lock held" : "no lock of its own released", failure.why);
        queue.enqueue(key);
    }

    /** The pods waiting now; for tests and the debug page. */
    synchronized List<String> pendingPods() {
        return List.copyOf(pending.keySet());
    }

    private WorkQueue.Result reconcile(String key, int attempt) {
        Pending failure;
        synchronized (this) {
            failure = pending.get(key);
        }
        if (failure == null) {
            return WorkQueue.Result.done();
        }
        failure.attempts++;
        Stage before = failure.stage;
        Outcome outcome;
        try {
            outcome = writer.attempt(failure);
        } catch (KubernetesClientException e) {
            failure.lastError = describe(e);
            metrics.bookkeeping(LockMetrics.Bookkeeping.RETRIED);
            log.debug("allocation failure of pod={} node={} still not written (attempt {}, stage {}): {}", key, node,
                    failure.attempts, failure.stage, failure.lastError);
            if (e.getCode() == 409 || failure.stage != before) {
                // The API answers again (a conflict is an answer, a step got written): the outage's long waits are
                // over, re-read after the first interval.
                return WorkQueue.Result.after(firstInterval);
            }
            return WorkQueue.Result.retry();
        }
        Duration waited = Duration.between(failure.failedAt, clock.instant());
        if (outcome instanceof Outcome.Attributed) {
            boolean moved;
            int size;
            synchronized (this) {
                pending.remove(key);
                moved = pending.putIfAbsent(failure.podKey, failure) == null;
                size = pending.size();
            }
            metrics.bookkeepingPending(size);
            log.info("allocation failure attributed pod={} node={}: the pod Allocate serves now (named by the node"
                    + " lock: {}) is still allocating and was bound before the failure ({} ago)", failure.podKey, node,
                    failure.lockHeld, waited);
            if (moved) {
                queue.enqueue(failure.podKey);
            }
            return WorkQueue.Result.done();
        }
        // Counted before the record goes, so whoever sees it gone sees it counted.
        metrics.bookkeeping(outcome instanceof Outcome.Written ? LockMetrics.Bookkeeping.WRITTEN
                : LockMetrics.Bookkeeping.DROPPED);
        int size;
        synchronized (this) {
            pending.remove(key);
            size = pending.size();
        }
        metrics.bookkeepingPending(size);
        if (outcome instanceof Outcome.Written written) {
            log.info("allocation failure written after the API answered again pod={} node={} attempts={} after={}"
                    + " (last error: {}): {}", key, node, failure.attempts, waited, failure.lastError,
                    written.detail());
        } else if (outcome instanceof Outcome.Dropped dropped) {
            log.info("allocation failure of pod={} node={} dropped after {} attempt(s), {}: {}", key, node,
                    failure.attempts, waited, dropped.why());
        }
        return WorkQueue.Result.done();
    }

    /** {@code HTTP 500 (etcdserver: request timed out)}: the code and the API's own message, or the client's. */
    static String describe(KubernetesClientException e) {
        if (e == null) {
            return "nothing";
        }
        String message = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage()
                : e.getCause() != null ? e.getCause().toString() : e.getMessage();
        return (e.getCode() > 0 ? "HTTP " + e.getCode() : "no answer") + " (" + PeerText.bound(firstLine(message))
                + ")";
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
