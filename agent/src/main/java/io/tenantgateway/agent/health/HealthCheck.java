package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import java.util.function.Supplier;

/**
 * One named readiness check ({@code server-connected}, {@code webhook-serving}, …). The supplier runs on the
 * health server's event loop, so it must only read state (volatile fields, snapshots) and never block.
 */
public record HealthCheck(String name, Supplier<Result> probe) {
    public HealthCheck {
        requireNonNull(name, "name");
        requireNonNull(probe, "probe");
        if (!name.matches("[a-z0-9-]+")) {
            throw new IllegalArgumentException("health check name: '" + name + "' (expected: lower-case words joined"
                    + " by '-')");
        }
    }

    /** Outcome of a check: ok, or failed with a reason shown in {@code /readyz?verbose}. */
    public record Result(boolean ok, String reason) {
        public static final Result OK = new Result(true, "ok");

        public Result {
            requireNonNull(reason, "reason");
        }

        public static Result failed(String reason) {
            return new Result(false, reason);
        }
    }

    /** Runs the probe; an exception is a failed check, never a failed endpoint. */
    public Result run() {
        try {
            Result result = probe.get();
            return result == null ? Result.failed("check returned nothing") : result;
        } catch (RuntimeException e) {
            return Result.failed("check threw " + e);
        }
    }
}
