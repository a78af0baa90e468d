package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The scheduler's retry strategy for node-lock writes (client-go {@code wait.Backoff}
 * {@code {Steps: 5, Duration: 100ms, Factor: 2, Jitter: 0.5}}): at most {@code steps} attempts;
 * before attempt {@code n} (1-based, n ≥ 2) wait {@code base × factor^(n-2)}, plus up to
 * {@code jitter} of that at random.
 *
 * @param baseDelay the first wait; injectable so tests run fast
 * @param factor growth per step (≥ 1)
 * @param jitter extra random fraction (0 = none)
 * @param steps the number of attempts, the first included
 */
public record RetryBackoff(Duration baseDelay, double factor, double jitter, int steps) {
    /** HAMi's {@code nodelock.DefaultStrategy}. */
    public static final RetryBackoff HAMI_DEFAULT = new RetryBackoff(Duration.ofMillis(100), 2.0, 0.5, 5);

    public RetryBackoff {
        requireNonNull(baseDelay, "baseDelay");
        if (baseDelay.isNegative()) {
            throw new IllegalArgumentException("baseDelay: " + baseDelay + " (expected: >= 0)");
        }
        if (!(factor >= 1.0)) {
            throw new IllegalArgumentException("factor: " + factor + " (expected: >= 1)");
        }
        if (!(jitter >= 0.0)) {
            throw new IllegalArgumentException("jitter: " + jitter + " (expected: >= 0)");
        }
        if (steps < 1) {
            throw new IllegalArgumentException("steps: " + steps + " (expected: >= 1)");
        }
    }

    /** HAMi's strategy with another first delay (tests use a few milliseconds). */
    public static RetryBackoff hamiWithBaseDelay(Duration baseDelay) {
        return new RetryBackoff(baseDelay, HAMI_DEFAULT.factor, HAMI_DEFAULT.jitter, HAMI_DEFAULT.steps);
    }

    /** True when attempt {@code attempt} (1-based) may be followed by another. */
    public boolean hasNext(int attempt) {
        return attempt < steps;
    }

    /**
     * The wait before attempt {@code attempt + 1}.
     *
     * @param attempt the attempt that just failed, 1-based, {@code < steps}
     * @param random a value in [0, 1) that scales the jitter
     */
    public Duration delayAfter(int attempt, double random) {
        if (attempt < 1 || attempt >= steps) {
            throw new IllegalArgumentException("attempt: " + attempt + " (expected: 1.." + (steps - 1) + ")");
        }
        if (!(random >= 0.0 && random < 1.0)) {
            throw new IllegalArgumentException("random: " + random + " (expected: [0, 1))");
        }
        double nanos = baseDelay.toNanos() * Math.pow(factor, attempt - 1);
        return Duration.ofNanos((long) (nanos + nanos * jitter * random));
    }
}
