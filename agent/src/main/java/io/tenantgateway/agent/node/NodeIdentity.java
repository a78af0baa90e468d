package io.tenantgateway.agent.node;

import static java.util.Objects.requireNonNull;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/**
 * The node this agent runs on: known from the start ({@code --node-name} or {@code NODE_NAME}), discovered from the
 * agent's own pod's {@code spec.nodeName} through the API (Kamaji's DaemonSet sets no {@code NODE_NAME}), or unset
 * (no part needs it). What needs the name awaits {@link #whenKnown()}; what shows it (the status page,
 * {@code /debug/config}, the config log line) reads {@link #name()} or {@link #describe()}, so nothing ever shows a
 * placeholder.
 *
 * <p>Thread-safe: {@link #discover()} runs on the agent's background start thread; the readers run anywhere.
 */
public final class NodeIdentity {
    private final Optional<NodeNames.PodIdentity> pod;
    private final Callable<String> lookup;
    private final CompletableFuture<String> name = new CompletableFuture<>();

    private NodeIdentity(Optional<NodeNames.PodIdentity> pod, Callable<String> lookup) {
        this.pod = pod;
        this.lookup = lookup;
    }

    /** From {@code --node-name} or {@code NODE_NAME}. */
    public static NodeIdentity known(String nodeName) {
        requireNonNull(nodeName, "nodeName");
        NodeIdentity identity = new NodeIdentity(Optional.empty(), null);
        identity.name.complete(nodeName);
        return identity;
    }

    /** Known when {@code nodeName} is present; otherwise unset (no part needs it, nothing is discovered). */
    public static NodeIdentity of(Optional<String> nodeName) {
        return nodeName.map(NodeIdentity::known).orElseGet(() -> new NodeIdentity(Optional.empty(), null));
    }

    /**
     * To be discovered from {@code pod}'s {@code spec.nodeName} with {@code lookup} (one API call per
     * {@link #discover()}; the caller retries).
     */
    public static NodeIdentity fromPod(NodeNames.PodIdentity pod, Callable<String> lookup) {
        return new NodeIdentity(Optional.of(requireNonNull(pod, "pod")), requireNonNull(lookup, "lookup"));
    }

    /** Whether the name comes from the agent's pod through the API (and {@link #discover()} must be called). */
    public boolean discovered() {
        return lookup != null;
    }

    /** The name, once known. */
    public Optional<String> name() {
        return Optional.ofNullable(name.getNow(null));
    }

    /** Completes with the name once known (at once when it was given); never completes when unset. */
    public CompletableFuture<String> whenKnown() {
        return name.copy();
    }

    /**
     * One discovery attempt: reads the pod's {@code spec.nodeName} and completes {@link #whenKnown()} (whose
     * dependents run on this thread). Returns at once when the name is already known.
     *
     * @throws Exception the lookup's failure (the API not answering, the pod missing or not scheduled)
     */
    public String discover() throws Exception {
        Optional<String> known = name();
        if (known.isPresent()) {
            return known.get();
        }
        if (lookup == null) {
            throw new IllegalStateException("node name unset and not discoverable");
        }
        String found = lookup.call();
        name.complete(found);
        return name.join();
    }

    /** Where the name comes from while it is being discovered: {@code pod NAMESPACE/NAME}; empty otherwise. */
    public Optional<String> pod() {
        return pod.map(p -> p.namespace() + "/" + p.name());
    }

    /**
     * The name for the config view and log line: the name once known, {@code <discovering from pod NS/NAME>} before,
     * {@code <unset>} when no part needs one.
     */
    public String describe() {
        return name().orElseGet(() -> pod().map(p -> "<discovering from pod " + p + ">").orElse("<unset>"));
    }

    @Override
    public String toString() {
        return "NodeIdentity{" + describe() + "}";
    }
}
