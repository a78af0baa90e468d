package io.tenantgateway.agent.part;

import io.tenantgateway.agent.k8s.KubernetesPermissions;
import java.util.List;
import java.util.Set;

/**
 * One feature of the agent beside the tunnel: the webhook, device registration, the device plugin, the lock
 * controller, the server lease counter. Every part has the same shape, like the Go agent's servers, NVIDIA's
 * {@code []plugin.Interface} and the Java Operator SDK's controllers: built from the configuration by
 * {@link Parts#enabled}, it declares what it will need before anything starts (its readiness checks, whether it needs
 * the API and the node name, the API calls it makes), then {@link #start} and {@link #close}.
 *
 * <p>A part lives in its own package, named after {@link #name()}, and meets the other parts only through its
 * {@link PartContext} (an ArchUnit rule keeps it so). Starting must not block on the API: what needs the API starts
 * through {@link PartContext#inBackground}, which retries with backoff and keeps the part's readiness check honest.
 */
public interface Part extends AutoCloseable {

    /** One noun: the part's package, readiness-check prefix, {@code describe()} key and docs name it. */
    String name();

    /**
     * The readiness checks this part will bind, known from the configuration alone: the health port lists them
     * (failing, "not started yet") before the part is built.
     *
     * @param apiClient whether the agent has an API client at all (some parts use the API only when one exists)
     */
    List<String> checks(boolean apiClient);

    /** Whether this part talks to the API by itself (then the agent has an API client). */
    boolean needsApi();

    /** Whether the part needs this node's name: it starts once the name is known (maybe discovered from the pod). */
    boolean needsNodeName();

    /**
     * What this part does with the API, the rows of the RBAC table.
     *
     * @param apiClient whether the agent has an API client at all (some parts use the API only when one exists)
     */
    Set<KubernetesPermissions.Use> apiUses(boolean apiClient);

    /**
     * Starts the part: what needs nothing starts here, what needs the API through
     * {@link PartContext#inBackground}. Called once, on the agent's start thread (or, for a part that needs the node
     * name, on the thread that discovered it). A failure here ends the agent's start: a
     * {@link io.tenantgateway.common.config.ConfigException} exits 2, anything else 70.
     */
    void start(PartContext context) throws Exception;

    /** Stops what {@link #start} started; idempotent, never throws (the agent closes the parts in reverse). */
    @Override
    void close();
}
