package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.DeferredCheck;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.node.OwnNode;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.tunnel.client.ServerCounter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the agent's {@link Part}s, the way the Java Operator SDK runs its controllers in one manager: declares every
 * part's readiness checks before anything starts, starts the parts in list order (a part that needs this node's name
 * once the name is known: with {@link NodeIdentity#discovered()} it is read from the agent's pod in the background,
 * and until then the part's checks say so), and closes them in reverse.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} are called by the agent under its lifecycle lock; the parts that
 * wait for the node name start on the discovery thread, under this manager's lock.
 */
public final class PartManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PartManager.class);
    /** The readiness check of the node name's discovery (Kamaji: no {@code NODE_NAME}). */
    public static final String NODE_IDENTITY_CHECK = "node-identity";
    /**
     * The tunnel's server count: once a part publishes a counter here ({@code --count-server-leases}), the tunnel
     * uses it; the servers' own count until then.
     */
    public static final Channel.Key<ServerCounter> SERVER_COUNTER = Channel.Key.of("server-counter");

    private final List<Part> parts;
    private final PartServices services;
    private final Map<Part, Map<String, DeferredCheck>> checks = new java.util.IdentityHashMap<>();
    private final List<Map.Entry<Part, PartContext>> started = new ArrayList<>();
    private final Object lock = new Object();
    private final boolean readsNode;
    private final HamiRelease release;
    private DeferredCheck nodeCheck;
    private boolean closed;
    private OwnNode ownNode;

    /**
     * @param parts the enabled parts, in start order ({@link Parts#enabled})
     * @param kubeconfig the API client's kubeconfig ({@code null}: in-cluster)
     * @param draining whether the agent is draining (parts fail their serving checks then)
     */
    public PartManager(List<Part> parts, PrometheusRegistry registry, Clock clock, NodeIdentity node, String version,
            String agentId, Path kubeconfig, BooleanSupplier draining) {
        this(parts, registry, clock, node, version, agentId, kubeconfig, draining, false);
    }

    /**
     * @param apiAccess whether the API is configured even when no part needs it ({@code tenant-gateway webhook
     *     --kubeconfig}: the quota check follows)
     */
    public PartManager(List<Part> parts, PrometheusRegistry registry, Clock clock, NodeIdentity node, String version,
            String agentId, Path kubeconfig, BooleanSupplier draining, boolean apiAccess) {
        this(parts, registry, clock, node, version, agentId, kubeconfig, draining, apiAccess,
                HamiRelease.V2_10);
    }

    /**
     * @param release the HAMi release whose scheduler's reading of this node {@link #ownNode()} shows (the webhook's
     *     {@code --hami-compat}, {@link io.tenantgateway.agent.AgentConfig#hamiRelease()})
     */
    public PartManager(List<Part> parts, PrometheusRegistry registry, Clock clock, NodeIdentity node, String version,
            String agentId, Path kubeconfig, BooleanSupplier draining, boolean apiAccess,
            HamiRelease release) {
        this.release = requireNonNull(release, "release");
        this.parts = List.copyOf(parts);
        boolean hasApi = apiAccess || node.discovered() || this.parts.stream().anyMatch(part -> part.plan().needsApi());
        this.services = new PartServices(registry, clock, node, version, agentId, kubeconfig, hasApi, draining);
        Set<Use> uses = EnumSet.noneOf(Use.class);
        this.parts.forEach(part -> uses.addAll(part.plan().uses(hasApi)));
        this.readsNode = KubernetesPermissions.keys(KubernetesPermissions.needed(uses)).contains("core/nodes:get");
    }

    /**
     * Every enabled part's readiness checks (and the node name's, while it is discovered), each "not started yet"
     * until its part binds it: registered with the health server before it accepts a connection.
     */
    public List<HealthCheck> declareChecks() {
        List<HealthCheck> out = new ArrayList<>();
        if (waitsForNode()) {
            nodeCheck = new DeferredCheck(NODE_IDENTITY_CHECK);
            out.add(nodeCheck.check());
        }
        for (Part part : parts) {
            Map<String, DeferredCheck> declared = new LinkedHashMap<>();
            for (String name : part.plan().checks(services.hasApi())) {
                DeferredCheck check = new DeferredCheck(name);
                declared.put(name, check);
                out.add(check.check());
            }
            checks.put(part, declared);
        }
        return out;
    }

    /**
     * Starts the parts that can start now, in order (a part after the ones its {@link Plan#after} names); the ones
     * that need the node name follow once it is discovered. A part that fails to start ends the start: what started
     * is closed and the failure rethrown.
     */
    public void start() {
        if (checks.isEmpty() && !parts.isEmpty()) {
            declareChecks(); // nobody serves the checks: still bound, for the views
        }
        List<Part> later = new ArrayList<>();
        for (Part part : startOrder()) {
            if (part.plan().needsNodeName() && services.node().name().isEmpty()) {
                later.add(part);
            } else {
                startPart(part);
            }
        }
        if (!later.isEmpty()) {
            discoverNode(later);
        }
    }

    /** The parts in list order, each moved behind the enabled parts its plan starts after. */
    private List<Part> startOrder() {
        List<Part> order = new ArrayList<>();
        for (Part part : parts) {
            addAfterItsPredecessors(part, order, new ArrayList<>());
        }
        return order;
    }

    private void addAfterItsPredecessors(Part part, List<Part> order, List<Part> visiting) {
        if (order.contains(part)) {
            return;
        }
        if (visiting.contains(part)) {
            throw new IllegalStateException("parts start after each other in a cycle: " + visiting);
        }
        visiting.add(part);
        for (String name : part.plan().after()) {
            for (Part before : parts) {
                if (before.plan().name().equals(name)) {
                    addAfterItsPredecessors(before, order, visiting);
                }
            }
        }
        order.add(part);
    }

    private boolean waitsForNode() {
        return services.node().discovered() && parts.stream().anyMatch(part -> part.plan().needsNodeName());
    }

    private void startPart(Part part) {
        PartContext context = new PartContext(services, part, checks.get(part));
        synchronized (lock) {
            if (closed) {
                return;
            }
            started.add(Map.entry(part, context));
        }
        try {
            part.start(context);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(part.plan().name() + " failed to start", e);
        }
    }

    /**
     * Kamaji's DaemonSet sets no NODE_NAME: the node name is read from this pod through the API, which may not answer
     * yet (retried in the background). Until then the parts that need it say "node name unknown".
     */
    private void discoverNode(List<Part> waiting) {
        NodeIdentity node = services.node();
        String pod = node.pod().orElseThrow();
        Part discovery = new NodeDiscovery(pod);
        PartContext context = new PartContext(services, discovery, Map.of(NODE_IDENTITY_CHECK, nodeCheck == null
                ? new DeferredCheck(NODE_IDENTITY_CHECK) : nodeCheck));
        synchronized (lock) {
            started.add(Map.entry(discovery, context));
        }
        HealthCheck discovering = context.inBackground(NODE_IDENTITY_CHECK, "node name discovery (--node-name unset; from pod " + pod + ")", () -> {
            node.discover(); // runs the dependents below on this thread
            return () -> { };
        }, done -> HealthCheck.Result.OK);
        if (nodeCheck != null) {
            nodeCheck.bind(new HealthCheck(NODE_IDENTITY_CHECK, () -> node.name().isPresent()
                    ? HealthCheck.Result.OK : HealthCheck.Result.failed("being discovered from pod " + pod
                            + " (spec.nodeName) through the API: " + discovering.run().reason())));
        }
        for (Part part : waiting) {
            for (DeferredCheck check : checks.get(part).values()) {
                check.bind(new HealthCheck(check.name(), () -> {
                    HealthCheck.Result result = discovering.run();
                    return HealthCheck.Result.failed(result.ok() ? "starting" : "node name unknown: "
                            + result.reason());
                }));
            }
        }
        node.whenKnown().thenAccept(name -> {
            log.info("node name discovered from this pod's spec.nodeName: {}", name);
            try {
                for (Part part : waiting) {
                    startPart(part);
                }
            } catch (RuntimeException e) {
                // A bad value only the name could reveal, or a port taken: the process ends as at start.
                log.error("the parts that need the node name cannot start: {}", e.getMessage());
                services.fatal(e);
            }
        });
    }

    /** Completes with what ends the agent after start: a configuration error (exit 2) or a bug (exit 70). */
    public CompletableFuture<RuntimeException> fatalError() {
        return services.fatal;
    }

    /** The tunnel's server count: a part's counter once published on {@link #SERVER_COUNTER}, else the servers'. */
    public int serverCount(int fromHeaders) {
        return services.serverCount(fromHeaders);
    }

    /**
     * The enabled part named {@code name}, once started. By name, not by class: a class literal would load the
     * part's class (and what it uses) in an agent where the part is off.
     */
    public Optional<Part> find(String name) {
        synchronized (lock) {
            return started.stream().map(Map.Entry::getKey).filter(part -> part.plan().name().equals(name)).findFirst();
        }
    }

    /** The channel {@code key} names, as the parts see it (the agent's views follow what parts publish). */
    public <T> Channel<T> channel(Channel.Key<T> key) {
        return services.channel(key);
    }

    /** Whether the agent talks to the API at all (some part needs it, or the node name is read from the pod). */
    public boolean hasApi() {
        return services.hasApi();
    }

    /**
     * A read-only view of this node for the status page ({@link OwnNode}): present when an enabled part may get this
     * Node (device registration, the lock controller, the device plugin), made on first call with the parts' API
     * client and background threads; empty otherwise, and once closed.
     */
    public Optional<OwnNode> ownNode() {
        if (!readsNode) {
            return Optional.empty();
        }
        synchronized (lock) {
            if (closed) {
                return Optional.empty();
            }
            if (ownNode == null) {
                ownNode = new OwnNode(services.kubernetes(), services.node(), services.scheduler(), services.clock(),
                        release);
            }
            return Optional.of(ownNode);
        }
    }

    /** The enabled parts' names, in start order ("webhook,devices"). */
    public String names() {
        return parts.stream().map(part -> part.plan().name()).collect(Collectors.joining(","));
    }

    /** Closes the started parts in reverse (each after what it handed its context), then the shared services. */
    @Override
    public void close() {
        List<Map.Entry<Part, PartContext>> toClose;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(started);
        }
        services.stopScheduler(); // interrupts a start attempt waiting on the API
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).getValue().closeOwned();
            PartServices.closeQuietly(toClose.get(i).getKey());
        }
        services.close();
    }

    /** The node name's discovery, run like a part's background start (no part of its own: nothing to configure). */
    private record NodeDiscovery(String pod) implements Part {
        @Override
        public Plan plan() {
            return Plan.of("node").check(NODE_IDENTITY_CHECK).uses(KubernetesPermissions.Use.NODE_NAME_DISCOVERY);
        }

        @Override
        public void start(PartContext context) {
        }
    }
}
