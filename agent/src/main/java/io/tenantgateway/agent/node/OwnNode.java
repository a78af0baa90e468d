package io.tenantgateway.agent.node;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterVendor;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded, read-only view of the agent's own Node for the status page and {@code /debug/devices}: its HAMi
 * registrations, every vendor, decoded ({@link NodeRegistrations}). Read from the lock controller's node informer
 * when it runs ({@link #fromInformer}: no API call), otherwise by one GET on demand ({@link #fetched}): a reader gets
 * the last read at once, and a GET starts in the background when that read is older than {@link #TTL}, one at a
 * time. Nobody looking, no GET. Made only where the agent may get its Node (device registration, the lock controller,
 * the device plugin: {@code KubernetesPermissions}). Keeps one decoded read; thread-safe, never blocks its caller.
 */
public final class OwnNode {
    private static final Logger log = LoggerFactory.getLogger(OwnNode.class);
    /** How old a GET's read may be before the next reader starts another. */
    public static final Duration TTL = Duration.ofSeconds(10);
    static final String INFORMER = "lock controller's node informer";
    private static final int WARNED_LIMIT = 64;
    static final String GET = "API get, at most every " + TTL.toSeconds() + "s while viewed";

    private final KubernetesClient client;
    private final NodeIdentity identity;
    private final Executor executor;
    private final Clock clock;
    private final HamiRelease release;
    private final AtomicBoolean reading = new AtomicBoolean();
    /** The oversized values warned about ({@code key=length}), at most {@value #WARNED_LIMIT}. */
    private final Set<String> warnedOversized = ConcurrentHashMap.newKeySet();
    private volatile NodeRegistrations fetched;
    private volatile Decoded fromInformer;

    private record Decoded(String resourceVersion, NodeRegistrations registrations) {
    }

    /**
     * @param client the agent's API client (not closed here)
     * @param executor runs the GETs (one at a time)
     */
    public OwnNode(KubernetesClient client, NodeIdentity identity, Executor executor, Clock clock) {
        this(client, identity, executor, clock, HamiRelease.V2_10);
    }

    /** @param release the HAMi release whose scheduler's reading to show ({@code --hami-compat}) */
    public OwnNode(KubernetesClient client, NodeIdentity identity, Executor executor, Clock clock,
            HamiRelease release) {
        this.release = requireNonNull(release, "release");
        this.client = requireNonNull(client, "client");
        this.identity = requireNonNull(identity, "identity");
        this.executor = requireNonNull(executor, "executor");
        this.clock = requireNonNull(clock, "clock");
    }

    /**
     * The registrations of the lock controller's copy of this Node, decoded again only when its resourceVersion
     * changed.
     *
     * @param node the informer's copy now, empty when it holds none
     * @param synced whether the informer has listed once (then an empty copy means the Node does not exist)
     */
    public NodeRegistrations fromInformer(Optional<Node> node, boolean synced) {
        String name = identity.name().orElse("");
        if (node.isEmpty()) {
            return synced ? NodeRegistrations.failed(name, "node " + name + " not found", clock.instant(), INFORMER)
                    : NodeRegistrations.pending(name, "the lock controller has not listed node " + name + " yet");
        }
        String version = node.get().getMetadata().getResourceVersion();
        Decoded last = fromInformer;
        if (last != null && version != null && version.equals(last.resourceVersion())) {
            return last.registrations();
        }
        NodeRegistrations decoded = decode(node.get(), name, INFORMER);
        fromInformer = new Decoded(version, decoded);
        return decoded;
    }

    /** The last GET's registrations, at once; a GET in the background when there is none or it is older than TTL. */
    public NodeRegistrations fetched() {
        Optional<String> name = identity.name();
        if (name.isEmpty()) {
            return NodeRegistrations.pending("", "node name not known yet (" + identity.describe() + ")");
        }
        NodeRegistrations last = fetched;
        Instant now = clock.instant();
        boolean stale = last == null || Duration.between(last.readAt(), now).compareTo(TTL) >= 0;
        if (stale && reading.compareAndSet(false, true)) {
            try {
                executor.execute(() -> read(name.get()));
            } catch (RejectedExecutionException e) {
                reading.set(false); // the agent is closing
            }
        }
        return last != null ? last : NodeRegistrations.pending(name.get(), "reading node " + name.get()
                + " through the API");
    }

    private void read(String name) {
        try {
            Node node = client.nodes().withName(name).get();
            fetched = node == null ? NodeRegistrations.failed(name, "node " + name + " not found", clock.instant(), GET)
                    : decode(node, name, GET);
        } catch (RuntimeException e) {
            log.debug("reading node {} for the status page failed", name, e);
            fetched = NodeRegistrations.failed(name, "cannot read node " + name + ": "
                    + KubernetesClients.describeFailure(client, e), clock.instant(), GET);
        } finally {
            reading.set(false);
        }
    }

    private NodeRegistrations decode(Node node, String name, String source) {
        Map<String, String> annotations = annotations(node);
        warnOversized(annotations, name);
        return NodeRegistrations.decode(name, annotations, capacity(node), labels(node), release, clock.instant(),
                source);
    }

    /**
     * One WARN line per register value larger than the API allows (by key and size: the next read of the same value
     * says nothing): no API server stores one, so the Node came from something else, and it is not decoded.
     */
    private void warnOversized(Map<String, String> annotations, String name) {
        annotations.forEach((key, value) -> {
            if (RegisterVendor.forKey(key).isPresent() && Annotations.exceedsSizeLimit(value)
                    && warnedOversized.size() < WARNED_LIMIT && warnedOversized.add(key + "=" + value.length())) {
                log.warn("node {}: {}; no API server stores such a value", name,
                        Annotations.sizeLimitMessage(key, value));
            }
        });
    }

    /** The Node's annotations ({@code {}} when none). */
    public static Map<String, String> annotations(Node node) {
        Map<String, String> annotations = node.getMetadata() == null ? null : node.getMetadata().getAnnotations();
        return annotations == null ? Map.of() : annotations;
    }

    /** The Node's labels ({@code {}} when none). */
    public static Map<String, String> labels(Node node) {
        Map<String, String> labels = node.getMetadata() == null ? null : node.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    /** The Node's status capacity, quantities as written ({@code {}} when none). */
    public static Map<String, String> capacity(Node node) {
        Map<String, String> capacity = new LinkedHashMap<>();
        if (node.getStatus() != null && node.getStatus().getCapacity() != null) {
            node.getStatus().getCapacity().forEach((resource, quantity) -> capacity.put(resource,
                    quantity.toString()));
        }
        return capacity;
    }
}
