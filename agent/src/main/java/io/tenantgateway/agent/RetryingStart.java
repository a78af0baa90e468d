package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.TunnelConfig;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts one part of the agent that depends on the Kubernetes API (lock controller, webhook quota lookup, Secret TLS
 * material, …) in the background, retrying with backoff until it works or the agent closes. The tunnel never waits
 * for it: the agent starts these after the tunnel, and a dead API only makes this part's readiness check fail with
 * the reason ({@code lock-controller-synced failed: tenant API https://… unreachable: Connection refused; retrying
 * in 2.2s (attempt 3)}).
 *
 * <p>Threading: attempts run on the shared parts scheduler, one at a time per part (the next is scheduled when the
 * previous ended). {@link #check()} reads volatile state only, so the health server's event loop may call it.
 * {@link #close()} may be called from any thread, also while an attempt runs; the part is closed either way.
 *
 * @param <T> the part
 */
final class RetryingStart<T extends AutoCloseable> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RetryingStart.class);
    /** First retry after 1 s, ×1.5 with 10 % jitter ({@link Backoff#agentSync}, as the tunnel), at most every 30 s. */
    static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    static final Duration RETRY_CAP = Duration.ofSeconds(30);

    /** One start attempt: builds or (re)starts the part and returns it; throws when the API is not there yet. */
    @FunctionalInterface
    interface Attempt<T> {
        T start() throws Exception;
    }

    private final String checkName;
    private final String partName;
    private final Attempt<T> attempt;
    private final Function<T, HealthCheck.Result> readiness;
    private final Function<Throwable, String> describeFailure;
    private final ScheduledExecutorService scheduler;
    private final Backoff.Execution backoff;
    private final Consumer<RuntimeException> fatal;
    private final Object lock = new Object();

    private volatile T part;
    private volatile String lastFailure;
    private volatile int attempts;
    private volatile Duration nextRetry;
    private boolean started;
    private boolean closed;

    /**
     * @param checkName name of the readiness check ({@code lock-controller-synced})
     * @param partName what the part is, for log lines ({@code lock controller})
     * @param attempt one start attempt; a failed attempt must leave nothing running (or be safe to retry)
     * @param readiness readiness once started (must only read state)
     * @param describeFailure turns an attempt's exception into a readiness reason (names the API and the cause)
     * @param fatal told about a configuration error ({@link ConfigException}, a port in use): no retry can fix it, the
     *        agent exits 2
     */
    RetryingStart(String checkName, String partName, Attempt<T> attempt, Function<T, HealthCheck.Result> readiness,
            Function<Throwable, String> describeFailure, ScheduledExecutorService scheduler, Backoff.Execution backoff,
            Consumer<RuntimeException> fatal) {
        this.checkName = requireNonNull(checkName, "checkName");
        this.partName = requireNonNull(partName, "partName");
        this.attempt = requireNonNull(attempt, "attempt");
        this.readiness = requireNonNull(readiness, "readiness");
        this.describeFailure = requireNonNull(describeFailure, "describeFailure");
        this.scheduler = requireNonNull(scheduler, "scheduler");
        this.backoff = requireNonNull(backoff, "backoff");
        this.fatal = requireNonNull(fatal, "fatal");
    }

    /** Schedules the first attempt now. Idempotent. */
    void start() {
        synchronized (lock) {
            if (started || closed) {
                return;
            }
            started = true;
        }
        schedule(Duration.ZERO);
    }

    /** The part once an attempt succeeded. */
    Optional<T> get() {
        return Optional.ofNullable(part);
    }

    /** The readiness check: not ready until started, then what the part itself says. */
    HealthCheck check() {
        return new HealthCheck(checkName, () -> {
            T current = part;
            if (current != null) {
                return readiness.apply(current);
            }
            String failure = lastFailure;
            if (failure == null) {
                return HealthCheck.Result.failed(attempts == 0 ? "not started yet" : "starting");
            }
            Duration retry = nextRetry;
            return HealthCheck.Result.failed(failure + (retry == null ? ""
                    : "; retrying in " + GoDuration.format(retry.truncatedTo(ChronoUnit.MILLIS)) + " (attempt " + attempts + ")"));
        });
    }

    private void schedule(Duration delay) {
        try {
            scheduler.schedule(this::run, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The agent is closing.
        }
    }

    private void run() {
        synchronized (lock) {
            if (closed) {
                return;
            }
        }
        int number = ++attempts;
        T result;
        try {
            result = attempt.start();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            RuntimeException configError = configurationError(e);
            if (configError != null) {
                lastFailure = configError.getMessage();
                nextRetry = null;
                log.error("{} cannot start: {}", partName, configError.getMessage());
                fatal.accept(configError);
                return;
            }
            String reason = describeFailure.apply(e);
            Duration wait = backoff.failure();
            boolean first = lastFailure == null || !lastFailure.equals(reason);
            lastFailure = reason;
            nextRetry = wait;
            if (first) {
                log.warn("{} not started: {}; retrying in {} (attempt {}; the tunnel is not affected)", partName,
                        reason, GoDuration.format(wait.truncatedTo(ChronoUnit.MILLIS)), number);
            } else {
                log.debug("{} not started: {}; retrying in {} (attempt {})", partName, reason,
                        GoDuration.format(wait.truncatedTo(ChronoUnit.MILLIS)), number);
            }
            synchronized (lock) {
                if (closed) {
                    return;
                }
            }
            schedule(wait);
            return;
        }
        boolean closeNow;
        synchronized (lock) {
            closeNow = closed;
            if (!closeNow) {
                part = result;
            }
        }
        if (closeNow) {
            closeQuietly(result);
            return;
        }
        nextRetry = null;
        if (number > 1) {
            log.info("{} started after {} attempts", partName, number);
        }
    }

    /** A failure no retry can fix (bad flags, a port in use), as the CLI reports it; {@code null} otherwise. */
    static RuntimeException configurationError(Exception e) {
        return ConfigException.in(e);
    }

    @Override
    public void close() {
        T current;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            current = part;
        }
        if (current != null) {
            closeQuietly(current);
        }
    }

    private void closeQuietly(T value) {
        try {
            value.close();
        } catch (Exception e) {
            log.warn("closing {} failed: {}", partName, e.toString());
        }
    }

    @Override
    public String toString() {
        return "RetryingStart{" + checkName + "}";
    }
}
