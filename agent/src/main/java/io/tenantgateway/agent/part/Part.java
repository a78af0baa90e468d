package io.tenantgateway.agent.part;

import java.util.Optional;

/**
 * One feature of the agent beside the tunnel: the webhook, device registration, the device plugin, the lock
 * controller, the server lease counter. Every part has the same shape, like the Go agent's servers, NVIDIA's
 * {@code []plugin.Interface} and the Java Operator SDK's controllers: built from the configuration by its
 * {@link PartKind} in {@code Parts.all}, it declares what it will need before anything starts ({@link #plan}), then
 * {@link #start} and {@link #close}.
 *
 * <p>A part lives in its own package, named after its {@linkplain Plan#name() name}, and meets the other parts only through its
 * {@link PartContext} (an ArchUnit rule keeps it so). Starting must not block on the API: what needs the API starts
 * through {@link PartContext#inBackground}, which retries with backoff and keeps the part's readiness check honest.
 */
public interface Part extends AutoCloseable {

    /**
     * What the part is and needs, from the configuration alone: its name, readiness checks (the health port lists
     * them, failing "not started yet", before the part is built), API uses, whether it needs the node name.
     */
    Plan plan();

    /**
     * Starts the part: what needs nothing starts here, what needs the API through
     * {@link PartContext#inBackground}. Called once, on the agent's start thread (or, for a part that needs the node
     * name, on the thread that discovered it). A failure here ends the agent's start: a
     * {@link io.tenantgateway.common.config.ConfigException} exits 2, anything else 70.
     */
    void start(PartContext context) throws Exception;

    /**
     * Stops what {@link #start} started and did not hand its context; idempotent, never throws (the agent closes the
     * parts in reverse, each after what it handed its context).
     */
    @Override
    default void close() {
    }

    /**
     * What the part shows of itself now (its status page section and {@code /debug/<name>}), for a part whose entry
     * names a {@linkplain PartKind#section() section}; empty before it started. Called on the admin server's event
     * loop: a snapshot, never blocking. None by default.
     */
    default Optional<PartView> view() {
        return Optional.empty();
    }
}
