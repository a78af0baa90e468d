package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.admin.AdminPortGuard;
import io.tenantgateway.agent.admin.AdminServer;
import io.tenantgateway.agent.channels.NodeInformer;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.HealthServer;
import io.tenantgateway.agent.health.JvmInstrumentation;
import io.tenantgateway.agent.health.MemoryBudgetMetrics;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.agent.node.OwnNode;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartManager;
import io.tenantgateway.common.memory.MemoryBudget;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.DrainReport;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent, as the Go agent's {@code Run}: the tunnel first (it waits for nothing: DESIGN.md "Start order"; none
 * with {@code --tunnel=false}, the node role), the health port with every readiness check declared, the admin port,
 * then the loop over the {@link Parts} ({@link PartManager}); closed in reverse.
 *
 * <p>Shutdown is two-phase, as the konnectivity protocol wants it: {@link #drain} fails readiness, sends DRAIN on
 * every server stream (servers stop routing new dials here) and waits for open tunnels to finish, up to the grace
 * period; {@link #close()} then releases everything. Both are idempotent and safe from a signal handler thread.
 */
public final class Agent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    /** How long past the grace deadline {@link #drain} waits for the tunnel to report. */
    private static final Duration DRAIN_SLACK = Duration.ofSeconds(5);

    private final AgentConfig config;
    private final NodeIdentity node;
    private final Clock clock;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PartManager parts;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final Object lifecycle = new Object();
    private volatile boolean draining;
    private boolean startCalled;
    private boolean closed;
    // Set during start; read by the health server's event loop and the admin server, hence volatile. The tunnel
    // stays null with --tunnel=false, as before it starts: tunnel() is the Optional everyone else reads.
    private volatile TunnelClientSet tunnel;
    private volatile HealthServer health;
    private volatile AdminServer admin;

    public Agent(AgentConfig config, Clock clock) {
        this(config, clock, NodeIdentity.of(config.nodeName()));
    }

    /**
     * @param node this node; when {@linkplain NodeIdentity#discovered() discovered} (the config then has no node
     *        name), it is read from the agent's pod in the background, and the parts that need it start once known
     */
    public Agent(AgentConfig config, Clock clock, NodeIdentity node) {
        this(config, clock, node, Parts.enabled(config));
    }

    /** With {@code parts} instead of {@link Parts#enabled}'s (tests: a part that fails), for the views below too. */
    Agent(AgentConfig config, Clock clock, NodeIdentity node, List<Part> parts) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
        this.node = requireNonNull(node, "node");
        this.parts = new PartManager(parts, registry, clock, node, Version.version(), config.agentId(),
                config.servers().kubeconfig(), () -> draining, false, config.hamiRelease());
    }

    /**
     * Starts the tunnel, health (with every part's readiness check), admin, then the parts. Idempotent; a failure
     * closes what already started, leaves the agent closed (a later {@code start()} throws) and rethrows.
     */
    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("agent closed");
            }
            if (startCalled) {
                return;
            }
            startCalled = true;
            try {
                doStart();
            } catch (RuntimeException | Error e) {
                closeStarted();
                closed = true;
                throw e;
            }
        }
    }

    private void doStart() {
        // The tunnel first; with --count-server-leases it uses the servers' count until the leases are listed.
        // Built before the start line: building checks --ca-cert and reads the TLS files, so a configuration the
        // agent cannot run with is rejected (one line, exit 2) without a "starting" line before it. None with
        // --tunnel=false (the node role): then the parts alone.
        Optional<TunnelClientSet> client = config.tunnel().map(this::buildTunnel);
        log.info("starting tenant-gateway {} config={}", Version.version(), describeConfig());
        if (client.isEmpty()) {
            log.info("tunnel off (--tunnel=false): running as a node role, no konnectivity-server connection"
                    + " parts={}", parts.names());
        } else if (parts.names().isEmpty()) {
            log.info("HAMi parts off (no --webhook-tls-cert, --device-source=none, no lock controller): running as a"
                    + " pure konnectivity-agent");
        }
        client.ifPresent(this::startTunnel);
        // process_* and jvm_* as upstream has process_* and go_*; the management beans are read from the first scrape
        // on (JvmInstrumentation).
        JvmInstrumentation.register(registry);
        MemoryBudgetMetrics.register(MemoryBudget.jvm(), registry);
        HttpLoop http = new HttpLoop(); // the health and admin ports: plain Netty on one event loop of their own
        http.start();
        started.push(http);

        // Every part's readiness check exists before the health port accepts a connection, from the configuration
        // alone ("not started yet" until the part binds it), so /readyz is never 200 early.
        health = new HealthServer(http, config.servers().healthServerHost(), config.servers().healthServerPort(),
                registry);
        health.addCheck(new HealthCheck("shutdown", () -> draining ? HealthCheck.Result.failed("draining")
                : HealthCheck.Result.OK));
        client.ifPresent(set -> health.addCheck(new HealthCheck("server-connected", () -> set.isReady()
                ? HealthCheck.Result.OK : HealthCheck.Result.failed(set.readinessFailure()))));
        parts.declareChecks().forEach(health::addCheck);
        health.start();
        started.push(health);

        // DESIGN.md: the admin port is never dialled
        boolean guardAdmin = client.isPresent() && AdminPortGuard.addHostAddresses(client.get());
        admin = new AdminServer(http, config.servers().adminBindAddress(), config.servers().adminServerPort(),
                new AgentAdminStatus(this), Version.version(), clock, new AdminServer.Options(health.boundPort(),
                        config.profiling(), config.contentionProfiling()));
        admin.start();
        started.push(admin);
        if (guardAdmin) {
            AdminPortGuard.addAdminPort(client.get(), admin.boundPort());
        }
        started.push(parts);
        if (node.discovered()) {
            node.whenKnown().thenAccept(name -> log.info("tenant-gateway config with the discovered node name"
                    + " config={}", describeConfig()));
        }
        parts.start();
        String names = Stream.concat(client.stream().map(set -> "tunnel"), parts.names().isEmpty() ? Stream.empty()
                : Stream.of(parts.names())).collect(Collectors.joining(","));
        log.info("tenant-gateway started parts={} tunnel={} health-port={} admin-port={}", names,
                client.isPresent() ? "on" : "off", health.boundPort(), admin.boundPort());
    }

    private TunnelClientSet buildTunnel(TunnelConfig tunnelConfig) {
        TunnelClientSet.Builder builder = TunnelClientSet.builder(tunnelConfig).registry(registry).clock(clock);
        if (tunnelConfig.countServerLeases()) {
            builder.serverCounter(parts::serverCount);
        }
        return builder.build();
    }

    private void startTunnel(TunnelClientSet client) {
        client.start();
        tunnel = client;
        started.push(client);
    }

    /**
     * First phase of shutdown: readiness fails, DRAIN goes to every server, and open tunnels get until
     * {@code deadline} to be closed by their peers (the webhook keeps serving calls that arrive on them). Then each
     * server stream is half-closed and ended by its server, so nothing queued is dropped; only at the deadline is
     * what is left cut (see {@link TunnelClientSet#drainAndClose}). Blocks until then. Without a tunnel
     * ({@code --tunnel=false}, or before it started) only readiness fails, at once.
     *
     * @return whether every tunnel was closed by its peer and every server received all its data
     */
    public boolean drain(Instant deadline) {
        synchronized (lifecycle) {
            boolean first = !draining && tunnel != null;
            draining = true;
            if (!first) {
                return tunnel == null || tunnel.openTunnels() == 0;
            }
        }
        log.info("draining: readiness off, DRAIN sent to servers, waiting for {} open tunnel(s) until {}",
                tunnel.openTunnels(), deadline);
        Optional<DrainReport> report = tunnel.drainAndAwait(deadline, DRAIN_SLACK);
        if (report.isEmpty()) {
            return false;
        }
        DrainReport drained = report.get();
        if (drained.lossless()) {
            log.info("drained: no open tunnels; every server stream ended after its half-close servers={}",
                    drained.servers().size());
            return true;
        }
        log.warn("shutdown grace over: cut {} tunnel(s) servers=[{}]", drained.tunnelsCut(), drained.describeCuts());
        return false;
    }

    public boolean isDraining() {
        return draining;
    }

    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            draining = true;
            parts.close(); // first, also when start() never pushed it: interrupts a start waiting on the API
            closeStarted();
        }
        log.info("tenant-gateway stopped");
    }

    private void closeStarted() {
        while (!started.isEmpty()) {
            AutoCloseable next = started.pop();
            try {
                next.close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", next.getClass().getSimpleName(), e.toString());
            }
        }
    }

    /** Completes with what ends the agent after start: a configuration error (exit 2) or a bug (exit 70). */
    public CompletableFuture<RuntimeException> fatalError() {
        return parts.fatalError();
    }

    /** The effective configuration, with this node's name as {@link NodeIdentity} knows it now. */
    Map<String, String> describeConfig() {
        Map<String, String> out = new LinkedHashMap<>(config.describe());
        out.put("node-name", node.describe());
        return out;
    }

    public AgentConfig config() {
        return config;
    }

    public NodeIdentity node() {
        return node;
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    public Optional<TunnelClientSet> tunnel() {
        return Optional.ofNullable(tunnel);
    }

    public Optional<HealthServer> health() {
        return Optional.ofNullable(health);
    }

    public Optional<AdminServer> admin() {
        return Optional.ofNullable(admin);
    }

    /**
     * The enabled part named {@code name}, once started (by name: a class literal would load the part's classes in an
     * agent where it is off). {@link PartViews} reads each part's own views from it.
     */
    public Optional<Part> part(String name) {
        return parts.find(name);
    }

    /**
     * This node's HAMi registrations, every vendor, decoded, for the status page and {@code /debug/devices}: from a
     * part's node informer while one runs ({@link NodeInformer#CHANNEL}: the lock controller's), else read through the
     * API on demand ({@link OwnNode}); off when no enabled part may read this Node. Never blocks.
     */
    public NodeRegistrations registrations() {
        Optional<OwnNode> own = parts.ownNode();
        if (own.isEmpty()) {
            return NodeRegistrations.off(parts.hasApi() ? "no enabled part reads this Node (device registration, the"
                    + " lock controller and the device plugin are off)" : "no Kubernetes API access (no enabled part"
                    + " uses the API)");
        }
        Optional<NodeInformer> informer = parts.channel(NodeInformer.CHANNEL).last();
        return informer.isPresent() ? own.get().fromInformer(informer.get().node().get(),
                informer.get().synced().getAsBoolean()) : own.get().fetched();
    }

    /** Readiness of every check, by name, for the status page. */
    public Map<String, HealthCheck.Result> readiness() {
        HealthServer current = health;
        return current == null ? Map.of() : current.checks().stream().collect(Collectors.toMap(HealthCheck::name,
                HealthCheck::run, (a, b) -> a, LinkedHashMap::new));
    }
}
