package io.tenantgateway.agent.channels;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.tenantgateway.agent.part.Channel;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A part's informer on this node (the lock controller's), published on {@link #CHANNEL} so that the status page and
 * {@code /debug/devices} read this node's registrations from its cache instead of through the API. Both suppliers
 * only read state and never block.
 *
 * @param node this node as the informer's cache has it now
 * @param synced whether the informer has synced
 */
public record NodeInformer(Supplier<Optional<Node>> node, BooleanSupplier synced) {
    /** A part with a node informer → the agent's views. */
    public static final Channel.Key<NodeInformer> CHANNEL = Channel.Key.of("node-informer");

    public NodeInformer {
        requireNonNull(node, "node");
        requireNonNull(synced, "synced");
    }
}
