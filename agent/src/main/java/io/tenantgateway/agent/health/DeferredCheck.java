package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A readiness check registered before the part it reports on exists: "not started yet" until {@link #bind} hands it
 * the part's own check. Lets the agent declare every enabled part's check before the health port opens, and still
 * build the parts afterwards (the tunnel first, without waiting for anything else).
 *
 * <p>Thread-safe: {@link #bind} from the starting thread, {@link #check()} from the health server's event loop.
 */
public final class DeferredCheck {
    private final String name;
    private final AtomicReference<HealthCheck> bound = new AtomicReference<>();

    public DeferredCheck(String name) {
        this.name = requireNonNull(name, "name");
    }

    public String name() {
        return name;
    }

    /** The check to register with the health server. */
    public HealthCheck check() {
        return new HealthCheck(name, () -> {
            HealthCheck delegate = bound.get();
            return delegate == null ? HealthCheck.Result.failed("not started yet") : delegate.run();
        });
    }

    /** From now on the check answers what {@code delegate} says (its name must match). */
    public void bind(HealthCheck delegate) {
        requireNonNull(delegate, "delegate");
        if (!delegate.name().equals(name)) {
            throw new IllegalArgumentException("check: " + delegate.name() + " (expected: " + name + ")");
        }
        bound.set(delegate);
    }
}
