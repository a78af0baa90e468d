package io.tenantgateway.tools.hamisim;

import static java.util.Objects.requireNonNull;

/**
 * The outcome of {@link HamiSchedulerSimulator#bind}: the extender's {@code ExtenderBindingResult}.
 *
 * @param bound whether the pod was bound
 * @param error the scheduler's error text when not bound ({@code ""} when bound)
 */
public record BindResult(boolean bound, String error) {
    public BindResult {
        requireNonNull(error, "error");
    }

    static BindResult ok() {
        return new BindResult(true, "");
    }

    static BindResult refused(String error) {
        return new BindResult(false, error == null ? "unknown error" : error);
    }
}
