package io.tenantgateway.agent.controller;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A keyed, coalescing work queue with one worker thread (client-go's {@code workqueue}, JOSDK's event processor): the
 * informer callbacks only {@link #enqueue} keys, the worker runs the {@link Reconciler} for one key at a time.
 *
 * <ul>
 *   <li>A key enqueued while it is queued runs once.</li>
 *   <li>A key enqueued while it is running runs once more after that run.</li>
 *   <li>A run that answers {@link Result#retry()} or throws an exception the reconciler calls retryable is run again
 *       after the {@link Backoff}'s wait for that key's failure count (attempt 2, 3, …) until the backoff is
 *       exhausted; a success resets the count. A pending retry does not swallow a fresh enqueue: the fresh run (attempt
 *       1) happens at once, the retry when due.</li>
 *   <li>{@link Result#after(Duration)} runs the key again after a delay (a periodic round).</li>
 * </ul>
 *
 * <p>Threading: {@link #enqueue} is cheap and non-blocking and may be called from any thread, before start and after
 * close too (ignored then). Everything the reconciler does happens on the worker thread, so reconcilers need no locks
 * for their own state. {@link #close()} stops accepting work, drops pending retries and delayed runs, and waits up to
 * the close timeout for the running reconcile before interrupting it.
 *
 * @param <K> the key: a pod's {@code namespace/name}, a node, a namespace
 */
public final class WorkQueue<K> extends Lifecycle {
    private static final Logger log = LoggerFactory.getLogger(WorkQueue.class);

    /** What a reconcile asks for next. */
    public sealed interface Result {
        /** Done until the key is enqueued again. */
        static Result done() {
            return Done.INSTANCE;
        }

        /** Failed without an exception (already logged): retry with the backoff. */
        static Result retry() {
            return Retry.INSTANCE;
        }

        /** Done; run the key again after {@code delay} (resets the failure count). */
        static Result after(Duration delay) {
            return new After(requireNonNull(delay, "delay"));
        }
    }

    private enum Done implements Result { INSTANCE }

    private enum Retry implements Result { INSTANCE }

    private record After(Duration delay) implements Result { }

    /** Reconciles one key; runs on the worker thread only. */
    public interface Reconciler<K> {
        /**
         * @param attempt 1 for a fresh run, n for the n-th run of a retry chain (re-read from the API, not the cache)
         */
        Result reconcile(K key, int attempt) throws Exception;

        /** Whether a thrown exception is worth a retry; otherwise it is logged and the key dropped until next time. */
        default boolean isRetryable(Exception e) {
            return false;
        }
    }

    private final String threadName;
    private final Reconciler<K> reconciler;
    private final Backoff backoff;
    private final Duration closeTimeout;

    private final Object lock = new Object();
    private final Set<K> queued = new HashSet<>(); // guarded by lock
    private final Set<K> dirty = new HashSet<>(); // guarded by lock: enqueued while running
    private K running; // guarded by lock
    private volatile ScheduledThreadPoolExecutor worker;

    /**
     * @param name the owner, for messages ({@code allocation controller for node n1})
     * @param threadName the worker thread's name
     * @param backoff waits between the attempts of one key
     * @param closeTimeout how long {@link #close()} waits for a running reconcile before interrupting it
     */
    public WorkQueue(String name, String threadName, Reconciler<K> reconciler, Backoff backoff, Duration closeTimeout) {
        super(name);
        this.threadName = requireNonNull(threadName, "threadName");
        this.reconciler = requireNonNull(reconciler, "reconciler");
        this.backoff = requireNonNull(backoff, "backoff");
        this.closeTimeout = requireNonNull(closeTimeout, "closeTimeout");
    }

    @Override
    protected void doStart() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, DaemonThreads.named(threadName));
        // Pending retries die with the queue; a successor re-derives everything from the API.
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        executor.setRemoveOnCancelPolicy(true);
        worker = executor;
    }

    @Override
    protected void doClose() {
        ScheduledThreadPoolExecutor executor = worker;
        if (executor == null) {
            return;
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(closeTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("{}: reconcile still running after {}; interrupting it", name(), closeTimeout);
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Queues {@code key} unless it is already queued (see the class comment). Any thread; never blocks. */
    public void enqueue(K key) {
        requireNonNull(key, "key");
        if (!isRunning()) {
            return;
        }
        synchronized (lock) {
            if (key.equals(running)) {
                dirty.add(key);
                return;
            }
            if (!queued.add(key)) {
                return;
            }
        }
        if (!submit(() -> runQueued(key), Duration.ZERO)) {
            synchronized (lock) {
                queued.remove(key);
            }
        }
    }

    /** Queues {@code key} after {@code delay} (coalescing when it comes due). Any thread. */
    public void enqueueAfter(K key, Duration delay) {
        requireNonNull(key, "key");
        submit(() -> enqueue(key), delay);
    }

    /**
     * Runs {@code task} on the worker every {@code interval} (fixed delay), first after one interval; an exception is
     * logged and the next run still happens. Call after {@link #start()}.
     */
    public void every(Duration interval, Runnable task) {
        requireNonNull(task, "task");
        ScheduledThreadPoolExecutor executor = worker;
        if (!isRunning() || executor == null) {
            return;
        }
        long millis = interval.toMillis();
        try {
            executor.scheduleWithFixedDelay(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    log.error("{}: periodic task failed", name(), e); // never let the periodic task die
                }
            }, millis, millis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            log.debug("{}: not scheduling, closing", name());
        }
    }

    /** Whether {@code key} is waiting for its run (not counting delayed retries); for tests and debug pages. */
    public boolean isQueued(K key) {
        synchronized (lock) {
            return queued.contains(key);
        }
    }

    private boolean submit(Runnable task, Duration delay) {
        ScheduledThreadPoolExecutor executor = worker;
        if (!isRunning() || executor == null) {
            return false;
        }
        try {
            executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (RejectedExecutionException closing) {
            return false;
        }
    }

    private void runQueued(K key) {
        synchronized (lock) {
            queued.remove(key);
        }
        run(key, 1);
    }

    private void run(K key, int attempt) {
        if (!isRunning()) {
            return;
        }
        synchronized (lock) {
            running = key;
        }
        Optional<Duration> retryAfter = Optional.empty();
        try {
            Result result = reconciler.reconcile(key, attempt);
            if (result instanceof After after) {
                enqueueAfter(key, after.delay());
            } else if (result == Retry.INSTANCE) {
                retryAfter = nextDelay(key, attempt, null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.debug("{}: interrupted key={}", name(), key);
        } catch (Exception e) {
            if (reconciler.isRetryable(e)) {
                retryAfter = nextDelay(key, attempt, e);
            } else {
                log.error("{}: reconcile failed key={}", name(), key, e);
            }
        } finally {
            boolean again;
            synchronized (lock) {
                running = null;
                again = dirty.remove(key);
            }
            if (again) {
                enqueue(key);
            }
        }
        retryAfter.ifPresent(delay -> {
            if (!submit(() -> run(key, attempt + 1), delay)) {
                log.debug("{}: not retrying, closing key={}", name(), key);
            }
        });
    }

    private Optional<Duration> nextDelay(K key, int attempt, Exception e) {
        if (!backoff.hasNext(attempt)) {
            if (e != null) {
                log.warn("{}: giving up for now key={} attempts={}; the next event retries", name(), key, attempt, e);
            }
            return Optional.empty();
        }
        Duration delay = backoff.delayAfter(attempt, ThreadLocalRandom.current().nextDouble());
        log.debug("{}: retrying key={} attempt={} delay={} error={}", name(), key, attempt, delay,
                e == null ? "" : e.toString());
        return Optional.of(delay);
    }
}
