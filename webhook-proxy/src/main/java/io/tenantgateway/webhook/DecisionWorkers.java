package io.tenantgateway.webhook;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads that parse reviews and decide them, off the event loops: a decision over a pod of thousands of
 * containers takes tens to hundreds of milliseconds, and on an event loop it would hold up every other request and
 * connection of that loop. Two lanes, so a large review never delays small ones: reviews whose body is over
 * {@link #LARGE_BODY_BYTES} go to the large lane ({@value #LARGE_WORKERS} thread), the rest to the small lane
 * ({@value #SMALL_WORKERS} threads). Each lane's queue is bounded ({@value #SMALL_QUEUE} and {@value #LARGE_QUEUE}
 * waiting decisions); a review that finds its lane's queue full is answered 429 at once (the memory of every queued
 * one is already reserved in the webhook's account, so the queue bound is a second, coarser line).
 *
 * <p>Thread-safe. {@link #close()} stops both lanes; decisions still queued are dropped (their connections are
 * closing with the server).
 */
final class DecisionWorkers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DecisionWorkers.class);
    /** A body over this goes to the large lane: about 500 one-GPU containers, tens of ms to decide on 2 cores. */
    static final int LARGE_BODY_BYTES = 64 * 1024;
    static final int SMALL_WORKERS = 2;
    static final int LARGE_WORKERS = 1;
    static final int SMALL_QUEUE = 256;
    static final int LARGE_QUEUE = 16;

    /** Which lane a review goes to. */
    enum Lane {
        SMALL, LARGE;

        static Lane forBody(long bodyBytes) {
            return bodyBytes > LARGE_BODY_BYTES ? LARGE : SMALL;
        }

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final ThreadPoolExecutor small = lane("small", SMALL_WORKERS, SMALL_QUEUE);
    private final ThreadPoolExecutor large = lane("large", LARGE_WORKERS, LARGE_QUEUE);

    private static ThreadPoolExecutor lane(String name, int threads, int queue) {
        AtomicInteger next = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queue), task -> {
                    Thread thread = new Thread(task, "webhook-decide-" + name + "-" + next.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                }, new ThreadPoolExecutor.AbortPolicy());
        // Idle lanes hold no threads: most agents see a handful of GPU pods an hour.
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Runs {@code decision} on {@code lane}; false (nothing runs) when that lane's queue is full or closed. */
    boolean submit(Lane lane, Runnable decision) {
        try {
            executor(lane).execute(decision);
            return true;
        } catch (RejectedExecutionException full) {
            log.debug("decision refused lane={} queued={}", lane.label(), queued(lane));
            return false;
        }
    }

    /** Decisions waiting in {@code lane} (not counting those running). */
    int queued(Lane lane) {
        return executor(lane).getQueue().size();
    }

    /** Decisions running in {@code lane}. */
    int running(Lane lane) {
        return executor(lane).getActiveCount();
    }

    static int queueLimit(Lane lane) {
        return lane == Lane.LARGE ? LARGE_QUEUE : SMALL_QUEUE;
    }

    private ThreadPoolExecutor executor(Lane lane) {
        return lane == Lane.LARGE ? large : small;
    }

    @Override
    public void close() {
        small.shutdownNow();
        large.shutdownNow();
    }
}
