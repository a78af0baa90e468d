package io.tenantgateway.common.retry;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * An exponential backoff (JOSDK's {@code GenericRetry}, client-go's {@code wait.Backoff}): before attempt {@code n + 1}
 * (after {@code n} failures, n ≥ 1) wait {@code min(initialInterval × multiplier^(n-1), cap)}, then add
 * {@code jitter × that × random} with {@code random} in [0, 1). A positive jitter stretches the wait (up to
 * {@code jitter} more); a negative one shortens it (up to {@code |jitter|} less). At most {@code maxAttempts} attempts,
 * the first included, or {@link #UNLIMITED}.
 *
 * <p>Immutable and thread-safe; {@link #start(RandomGenerator)} gives the stateful, single-threaded counter.
 *
 * @param initialInterval the first wait
 * @param multiplier growth per failure (≥ 1)
 * @param jitter random fraction added (&gt; 0) or taken off (&lt; 0); in [-1, ∞)
 * @param cap the longest wait before jitter, or {@code null} for none
 * @param maxAttempts attempts in all, the first included (≥ 1), or {@link #UNLIMITED}
 */
public record Backoff(Duration initialInterval, double multiplier, double jitter, Duration cap, int maxAttempts) {
    public static final int UNLIMITED = -1;

    /** HAMi's {@code nodelock.DefaultStrategy}: {@code {Steps: 5, Duration: 100ms, Factor: 2, Jitter: 0.5}}. */
    public static final Backoff HAMI_NODE_LOCK = hamiNodeLock(Duration.ofMillis(100));

    /** Upstream konnectivity-agent's sync backoff with its defaults ({@code --sync-interval 1s}, cap 10 s). */
    public static final Backoff AGENT_SYNC = agentSync(Duration.ofSeconds(1), Duration.ofSeconds(10));

    public Backoff {
        requireNonNull(initialInterval, "initialInterval");
        if (initialInterval.isNegative()) {
            throw new IllegalArgumentException("initialInterval: " + initialInterval + " (expected: >= 0)");
        }
        if (!(multiplier >= 1.0)) {
            throw new IllegalArgumentException("multiplier: " + multiplier + " (expected: >= 1)");
        }
        if (!(jitter >= -1.0) || Double.isInfinite(jitter)) {
            throw new IllegalArgumentException("jitter: " + jitter + " (expected: >= -1)");
        }
        if (cap != null && cap.compareTo(initialInterval) < 0) {
            throw new IllegalArgumentException("cap: " + cap + " (expected: >= initialInterval " + initialInterval + ")");
        }
        if (maxAttempts < 1 && maxAttempts != UNLIMITED) {
            throw new IllegalArgumentException("maxAttempts: " + maxAttempts + " (expected: >= 1 or UNLIMITED)");
        }
    }

    /** HAMi's node-lock strategy with another first wait (tests use a few milliseconds). */
    public static Backoff hamiNodeLock(Duration initialInterval) {
        return new Backoff(initialInterval, 2.0, 0.5, null, 5);
    }

    /**
     * Upstream's connection loop: {@code interval} after the first failure, ×1.5 per further failure up to
     * {@code cap}, every wait stretched by up to 10 % so that agents restarted together do not dial in lock step;
     * unlimited.
     */
    public static Backoff agentSync(Duration interval, Duration cap) {
        return new Backoff(interval, 1.5, 0.1, cap, UNLIMITED);
    }

    /** Doubling from {@code initialInterval}, no cap, no jitter, unlimited; refine with the {@code with…} methods. */
    public static Backoff exponential(Duration initialInterval) {
        return new Backoff(initialInterval, 2.0, 0.0, null, UNLIMITED);
    }

    public Backoff withMultiplier(double value) {
        return new Backoff(initialInterval, value, jitter, cap, maxAttempts);
    }

    public Backoff withJitter(double value) {
        return new Backoff(initialInterval, multiplier, value, cap, maxAttempts);
    }

    public Backoff withCap(Duration value) {
        return new Backoff(initialInterval, multiplier, jitter, value, maxAttempts);
    }

    public Backoff withMaxAttempts(int value) {
        return new Backoff(initialInterval, multiplier, jitter, cap, value);
    }

    /** True when attempt {@code attempt} (1-based) may be followed by another. */
    public boolean hasNext(int attempt) {
        return maxAttempts == UNLIMITED || attempt < maxAttempts;
    }

    /**
     * The wait before attempt {@code attempt + 1}.
     *
     * @param attempt the attempt that just failed, 1-based; {@link #hasNext(int) hasNext(attempt)} must hold
     * @param random a value in [0, 1) that scales the jitter
     */
    public Duration delayAfter(int attempt, double random) {
        if (attempt < 1 || !hasNext(attempt)) {
            throw new IllegalArgumentException("attempt: " + attempt + " (expected: 1.."
                    + (maxAttempts == UNLIMITED ? "" : Integer.toString(maxAttempts - 1)) + ")");
        }
        double nanos = initialInterval.toNanos() * Math.pow(multiplier, attempt - 1);
        if (cap != null) {
            nanos = Math.min(nanos, cap.toNanos());
        }
        return jittered(nanos, random);
    }

    /** {@link #initialInterval()} with jitter: the steady wait of a loop that is not failing. */
    public Duration steady(double random) {
        return jittered(initialInterval.toNanos(), random);
    }

    private Duration jittered(double nanos, double random) {
        if (!(random >= 0.0 && random < 1.0)) {
            throw new IllegalArgumentException("random: " + random + " (expected: [0, 1))");
        }
        return Duration.ofNanos((long) nanos + (long) (nanos * jitter * random));
    }

    /** A fresh counter of failures for one retried operation. */
    public Execution start(RandomGenerator random) {
        return new Execution(this, requireNonNull(random, "random"));
    }

    /**
     * The failures of one retried operation (JOSDK's {@code RetryExecution}). Not thread-safe: one thread (a
     * scheduler, a worker) owns it.
     */
    public static final class Execution {
        private final Backoff backoff;
        private final RandomGenerator random;
        private int failures;

        private Execution(Backoff backoff, RandomGenerator random) {
            this.backoff = backoff;
            this.random = random;
        }

        /** Counts a failure; the wait before the next attempt, or empty when no attempt is left. */
        public Optional<Duration> nextDelay() {
            failures++;
            if (!backoff.hasNext(failures)) {
                return Optional.empty();
            }
            return Optional.of(backoff.delayAfter(failures, random.nextDouble()));
        }

        /**
         * The wait after a failure of an unlimited backoff.
         *
         * @throws IllegalStateException when the backoff has a maximum of attempts
         */
        public Duration failure() {
            if (backoff.maxAttempts() != UNLIMITED) {
                throw new IllegalStateException("failure() needs an unlimited backoff (maxAttempts: "
                        + backoff.maxAttempts() + ")");
            }
            return nextDelay().orElseThrow();
        }

        /** Forgets the failures and returns the steady (jittered initial) wait. */
        public Duration steady() {
            failures = 0;
            return backoff.steady(random.nextDouble());
        }

        /** Forgets the failures. */
        public void reset() {
            failures = 0;
        }

        /** Failures counted since the start or the last reset. */
        public int failures() {
            return failures;
        }
    }
}
