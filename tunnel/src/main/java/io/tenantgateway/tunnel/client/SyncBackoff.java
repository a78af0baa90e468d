package io.tenantgateway.tunnel.client;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * The connection loop's waits, as upstream computes them: the sync interval while all is well; after errors
 * ×1.5 per failure up to the cap; every wait stretched by up to 10 % jitter so agents restarted together do
 * not dial in lock step. Not thread-safe (used by the sync thread only).
 */
public final class SyncBackoff {
    static final double FACTOR = 1.5;
    static final double JITTER = 0.1;

    private final Duration interval;
    private final Duration cap;
    private final RandomGenerator random;
    private Duration current;

    public SyncBackoff(Duration interval, Duration cap, RandomGenerator random) {
        this.interval = requireNonNull(interval, "interval");
        this.cap = requireNonNull(cap, "cap");
        this.random = requireNonNull(random, "random");
        this.current = interval;
    }

    /** The regular wait (after success, or while enough servers are connected); resets the error backoff. */
    public Duration steady() {
        current = interval;
        return jitter(interval);
    }

    /** The wait after a failed attempt: the current step, then the next one grows ×1.5 up to the cap. */
    public Duration failure() {
        Duration wait = current;
        long next = (long) (current.toNanos() * FACTOR);
        current = Duration.ofNanos(Math.min(next, cap.toNanos()));
        return jitter(wait);
    }

    private Duration jitter(Duration base) {
        return base.plusNanos((long) (base.toNanos() * JITTER * random.nextDouble()));
    }
}
