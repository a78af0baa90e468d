package io.tenantgateway.tunnel.client;

import io.tenantgateway.common.concurrent.DaemonThreads;
import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.logging.Verbosity;
import io.tenantgateway.common.time.GoDuration;
import io.grpc.netty.GrpcSslContexts;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.common.memory.MemoryBudget;
import io.tenantgateway.tunnel.endpoint.EndpointDialer;
import io.tenantgateway.tunnel.metrics.AgentMetrics;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.ConnectionIds;
import io.tenantgateway.tunnel.transport.TlsProviders;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's set of server connections, kept at the servers' {@code servercount} (upstream's ClientSet).
 *
 * <p>One sync thread runs the loop: while fewer connections than servers are held (or with
 * {@code --sync-forever}), dial a new connection through the load balancer; a server we already hold is closed
 * at once and the loop carries on at the normal interval; failures back off ×1.5 with jitter up to the cap. A
 * probe drops connections whose channel is no longer READY. Nothing here blocks an event loop: the token file
 * is read and the server count is asked on the sync thread.
 *
 * <p>Lifecycle: {@link #start()} once; on shutdown {@link #drainAndClose} (DRAIN on every stream, no new
 * connections, tunnels keep working until their peers close them, then each stream is half-closed and ended by its
 * server), then {@link #close()}, which cuts whatever is left and releases the event loops.
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}, because its transitions differ: between running and closed
 * there is {@link #drain()} (DRAIN sent, no new server connections, existing tunnels finish), and {@code close()}
 * after a drain is the second half of a graceful stop rather than an abort.
 */
public final class TunnelClientSet implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TunnelClientSet.class);

    private final TunnelConfig config;
    private final ClientResources resources;
    private final ServerCounter serverCounter;
    private final Backoff.Execution backoff;
    private final AgentMetrics metrics;
    private final Clock clock;
    private final EventLoopGroup ownedGroup;
    private final ReloadingTlsMaterial ownedMaterial;
    private final Map<String, TunnelClient> clients = new ConcurrentHashMap<>();
    private final Object lifecycle = new Object();
    private ScheduledExecutorService scheduler;
    private ScheduledFuture<?> probe;
    private volatile boolean started;
    private volatile boolean draining;
    private volatile boolean closed;
    private volatile int lastServerCount;
    private volatile TunnelClient attempt;
    private final List<TunnelClient> closedGracefully = new CopyOnWriteArrayList<>();
    private long attempts;

    private TunnelClientSet(Builder builder) {
        this.config = builder.config;
        this.clock = builder.clock;
        this.serverCounter = builder.serverCounter;
        this.backoff = Backoff.agentSync(config.syncInterval(), config.syncIntervalCap()).start(builder.random);
        ReloadingTlsMaterial loaded = null;
        TlsMaterial material = builder.material;
        if (material == null) {
            if (config.caCert() == null) {
                throw new ConfigException("--ca-cert", "not set", "the CA bundle that signs the server certificate");
            }
            loaded = ReloadingTlsMaterial.load(config.agentCert() == null ? TlsFiles.trustOnly(config.caCert())
                    : TlsFiles.identityAndTrust(config.agentCert(), config.agentKey(), config.caCert()),
                    Duration.ofMinutes(1));
            material = loaded;
        }
        this.ownedMaterial = loaded;
        EventLoopGroup group = builder.group;
        this.ownedGroup = group == null
                ? Transports.newGroup(Math.max(1, Runtime.getRuntime().availableProcessors()), "tunnel-agent")
                : null;
        if (group == null) {
            group = ownedGroup;
        }
        this.metrics = new AgentMetrics(builder.registry);
        SslContextBuilder ssl = GrpcSslContexts.configure(TlsContexts.clientBuilder(material, clock), builder.sslProvider);
        if (!config.alpnProtos().isEmpty()) {
            TlsContexts.alpn(ssl, config.alpnProtos().toArray(String[]::new));
        }
        SslContext sslContext = TlsContexts.build(ssl);
        TargetBudget budget = TargetBudget.of(builder.memoryBudget);
        // Against servers without the extension a tunnel may buffer xfr-channel-size x DATA size towards its target,
        // but never more than half the target-buffer budget: one stalled tunnel alone must not pause every stream.
        long perTunnel = Math.min(config.perTunnelBufferBytes(), budget.limit() / 2);
        EndpointDialer dialer = new EndpointDialer(group, config.dialPolicy(), config.dialTimeout(),
                config.maxDataSize(), (int) Math.min(Integer.MAX_VALUE, perTunnel));
        this.resources = new ClientResources(config, sslContext, group, dialer, metrics, clock, new ConnectionIds(),
                budget);
    }

    public static Builder builder(TunnelConfig config) {
        return new Builder(config);
    }

    /** Starts the sync loop and the probe. Idempotent. */
    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("closed");
            }
            if (started) {
                return;
            }
            started = true;
            if (ownedMaterial != null) {
                ownedMaterial.start();
            }
            scheduler = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("tunnel-sync"));
            log.info("tunnel agent starting {}", config.describe());
            if (config.dialPolicy().allowsAll()) {
                log.warn("dial policy allows every destination (upstream behaviour); configure allow/deny lists to"
                        + " restrict what the control plane can reach through this agent");
            }
            scheduler.execute(this::sync);
            long probeNanos = config.probeInterval().toNanos();
            probe = scheduler.scheduleWithFixedDelay(this::probe, probeNanos, probeNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** The dial policy in force (the configuration's, or the last {@link #dialPolicy(DialPolicy)}). */
    public DialPolicy dialPolicy() {
        return resources.dialer().policy();
    }

    /**
     * Replaces the dial policy for every later dial, e.g. once the agent's admin port is bound ({@code
     * --admin-server-port=0}) or this host's addresses are known. Any thread.
     */
    public void dialPolicy(DialPolicy value) {
        resources.dialer().policy(value);
    }

    /**
     * Sends DRAIN on every server stream and stops opening new connections. Existing tunnels keep working; call
     * {@link #close()} after the grace period.
     */
    public void drain() {
        synchronized (lifecycle) {
            if (draining || closed) {
                return;
            }
            draining = true;
        }
        log.info("draining: sending DRAIN to {} server(s), no new server connections", clients.size());
        clients.values().forEach(TunnelClient::drain);
    }

    /**
     * {@link #drainAndClose}, waited for: its report, or empty (logged) when the tunnel did not report within
     * {@code slack} after {@code deadline} (it cuts what is left at the deadline itself; the slack only covers a
     * stuck event loop) or the wait was interrupted. Blocks; not on an event loop.
     */
    public java.util.Optional<DrainReport> drainAndAwait(Instant deadline, Duration slack) {
        CompletableFuture<DrainReport> report = drainAndClose(deadline);
        long waitMillis = Math.max(0, Duration.between(clock.instant(), deadline).toMillis()) + slack.toMillis();
        try {
            return java.util.Optional.of(report.get(waitMillis, java.util.concurrent.TimeUnit.MILLISECONDS));
        } catch (java.util.concurrent.TimeoutException e) {
            log.warn("shutdown grace over and the tunnel did not finish within {}; closing it with {} tunnel(s)"
                    + " open", slack, openTunnels());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("drain interrupted; closing the tunnel with {} tunnel(s) open", openTunnels());
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("drain failed", e.getCause());
        }
        return java.util.Optional.empty();
    }

    /**
     * Shuts the tunnels down without losing data, bounded by {@code deadline}: {@link #drain()}, then
     * {@link TunnelClient#closeGracefully} on every server connection (each waits until its tunnels were closed by
     * their peers, half-closes its stream and waits for the server to end it; at the deadline it cancels and
     * counts the tunnels it cut). Non-blocking and idempotent per connection; any thread. The future completes on
     * an event loop (dependents must not block), at the latest shortly after {@code deadline}. Call
     * {@link #close()} afterwards to release the event loops.
     */
    public CompletableFuture<DrainReport> drainAndClose(Instant deadline) {
        requireNonNull(deadline, "deadline");
        drain();
        List<TunnelClient> all = new ArrayList<>(clients.values());
        closedGracefully.addAll(all);
        List<CompletableFuture<DrainResult>> results = all.stream().map(c -> c.closeGracefully(deadline)).toList();
        return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
                .thenApply(done -> new DrainReport(results.stream().map(CompletableFuture::join).toList()));
    }

    /**
     * Closes every server connection and its tunnels: a connection still open is cancelled (see
     * {@link TunnelClient#close()}; use {@link #drainAndClose} first to lose nothing). Idempotent; waits up to a
     * few seconds for the sockets. Blocks: call it from a plain thread (shutdown hook, main), not an event loop.
     */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        List<TunnelClient> all = new ArrayList<>(clients.values());
        TunnelClient pending = attempt;
        if (pending != null) {
            all.add(pending);
        }
        all.forEach(TunnelClient::close);
        for (TunnelClient client : all) {
            try {
                client.closeFuture().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                log.warn("server connection did not close within 5s serverID={}: {}", client.serverId(),
                        e.toString());
            }
        }
        // Connections that ended gracefully shut their channel down with shutdown(): let the GOAWAY and the TCP
        // close go out before the event loops stop (bounded, so a stuck peer cannot hold the exit). The cut ones
        // too: a channel closed during its first connect may still be registering a transport on the loops (from
        // gRPC's resolver thread), which fails noisily once they are gone.
        long terminationDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<TunnelClient> terminating = new ArrayList<>(closedGracefully);
        all.stream().filter(client -> !terminating.contains(client)).forEach(terminating::add);
        for (TunnelClient client : terminating) {
            Duration left = Duration.ofNanos(Math.max(0, terminationDeadline - System.nanoTime()));
            if (!client.awaitTermination(left)) {
                log.warn("server connection did not terminate within 5s serverID={}", client.serverId());
            }
        }
        clients.clear();
        metrics.serverConnections(0);
        resources.dialer().close();
        if (ownedGroup != null) {
            ownedGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (ownedMaterial != null) {
            ownedMaterial.close();
        }
        log.info("tunnel agent closed");
    }

    /** Readiness as upstream defines it: at least one server connection is established. */
    public boolean isReady() {
        return clients.values().stream().anyMatch(c -> c.state() == TunnelClient.State.READY
                || c.state() == TunnelClient.State.DRAINING);
    }

    /**
     * Why {@code /readyz} fails, as upstream says it ({@code [-]server-connected failed: no servers connected}: this
     * is the part after {@code failed: }), or {@code null} when ready.
     */
    public String readinessFailure() {
        return isReady() ? null : "no servers connected";
    }

    public boolean isDraining() {
        return draining;
    }

    /** Current connections by server id. */
    public Map<String, TunnelClient.State> connections() {
        Map<String, TunnelClient.State> out = new LinkedHashMap<>();
        clients.forEach((id, client) -> out.put(id, client.state()));
        return out;
    }

    public int serverCount() {
        return lastServerCount;
    }

    /** Open tunnels across all server connections (cheap; for leak checks and gauges). */
    public int openTunnels() {
        return clients.values().stream().mapToInt(TunnelClient::openTunnels).sum();
    }

    public AgentSnapshot snapshot() {
        Instant now = clock.instant();
        List<ServerConnectionSnapshot> servers = new ArrayList<>();
        List<TunnelSnapshot> tunnels = new ArrayList<>();
        for (TunnelClient client : clients.values()) {
            servers.add(client.snapshot());
            client.addTunnelSnapshots(tunnels, now);
        }
        servers.sort(Comparator.comparing(ServerConnectionSnapshot::serverId));
        tunnels.sort(Comparator.comparingLong(TunnelSnapshot::connectId));
        return new AgentSnapshot(now, lastServerCount, draining, servers, tunnels);
    }

    // ---- sync loop (scheduler thread) ----

    private void sync() {
        if (closed || draining) {
            return;
        }
        int target;
        try {
            target = serverCounter.serverCount(lastServerCount);
        } catch (RuntimeException e) {
            log.warn("server counter failed; keeping the last count {}: {}", lastServerCount, e.toString());
            target = lastServerCount;
        }
        metrics.serverCount(target);
        if (!config.syncForever() && target > 0 && clients.size() >= target) {
            schedule(backoff.steady());
            return;
        }
        String token = null;
        if (config.serviceAccountTokenPath() != null) {
            try {
                // Re-read on every attempt: projected tokens rotate hourly.
                token = Files.readString(config.serviceAccountTokenPath()).strip();
            } catch (IOException e) {
                Duration wait = backoff.failure();
                log.warn("cannot read service account token {}: {}; retrying in {}",
                        config.serviceAccountTokenPath(), e.toString(), GoDuration.format(wait.truncatedTo(ChronoUnit.MILLIS)));
                schedule(wait);
                return;
            }
        }
        attempts++;
        long attemptNumber = attempts;
        TunnelClient client = new TunnelClient(resources, token);
        attempt = client;
        client.connected().whenComplete((identity, failure) -> {
            try {
                scheduler.execute(() -> attemptDone(client, attemptNumber, identity, failure));
            } catch (RejectedExecutionException e) {
                client.close(); // closing
            }
        });
        client.start();
    }

    private void attemptDone(TunnelClient client, long attemptNumber, ServerIdentity identity, Throwable failure) {
        attempt = null;
        if (closed) {
            client.close();
            return;
        }
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            Duration wait = backoff.failure();
            String code = cause instanceof ConnectAttemptException attemptFailure
                    ? attemptFailure.status().getCode().name() : cause.getClass().getSimpleName();
            // Upstream's ErrorS(err, "cannot connect once"), with what we know about the attempt.
            log.atError().addKeyValue("err", cause.getMessage())
                    .addKeyValue("server", config.proxyServerHost() + ":" + config.proxyServerPort())
                    .addKeyValue("attempt", attemptNumber).addKeyValue("code", code)
                    .addKeyValue("retryIn", GoDuration.format(wait.truncatedTo(ChronoUnit.MILLIS)))
                    .log("cannot connect once");
            client.close();
            schedule(wait);
            return;
        }
        if (draining) {
            client.close();
            return;
        }
        if (lastServerCount != 0 && identity.serverCount() != lastServerCount) {
            Verbosity.v(log, 2).addKeyValue("current", lastServerCount).addKeyValue("serverID", identity.serverId())
                    .addKeyValue("actual", identity.serverCount()).log("Server count change suggestion by server");
        }
        lastServerCount = identity.serverCount();
        metrics.serverCount(serverCounter.serverCount(lastServerCount));
        if (clients.containsKey(identity.serverId())) {
            Verbosity.v(log, 4).addKeyValue("serverID", identity.serverId())
                    .addKeyValue("serverCount", identity.serverCount()).addKeyValue("clientsCount", clients.size())
                    .log("duplicate server");
            client.close("duplicate server connection");
            schedule(backoff.steady());
            return;
        }
        clients.put(identity.serverId(), client);
        metrics.serverConnections(clients.size());
        Verbosity.v(log, 2).addKeyValue("serverID", identity.serverId()).addKeyValue("agentID", config.agentId())
                .addKeyValue("serverCount", identity.serverCount()).addKeyValue("flowControl", identity.flowControl())
                .addKeyValue("connections", clients.size()).log("Start serving");
        client.closeFuture().whenComplete((status, error) -> {
            if (clients.remove(identity.serverId(), client)) {
                metrics.serverConnections(clients.size());
            }
        });
        schedule(backoff.steady());
    }

    private void probe() {
        for (TunnelClient client : clients.values()) {
            if (client.state() == TunnelClient.State.CLOSED || !client.channelReady()) {
                if (clients.remove(client.serverId(), client)) {
                    Verbosity.v(log, 1).addKeyValue("state", client.state() == TunnelClient.State.CLOSED
                                    ? "CLOSED" : client.channelState().name())
                            .addKeyValue("serverID", client.serverId())
                            .log("Removing client used for server connection");
                    metrics.serverConnections(clients.size());
                    client.close("probe: channel not ready");
                }
            }
        }
    }

    private void schedule(Duration wait) {
        if (!closed) {
            scheduler.schedule(this::sync, wait.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Builds a set; only the configuration and the metrics registry are required. */
    public static final class Builder {
        private final TunnelConfig config;
        private TlsMaterial material;
        private PrometheusRegistry registry;
        private Clock clock = Clock.systemUTC();
        private ServerCounter serverCounter = ServerCounter.FROM_HEADERS;
        private EventLoopGroup group;
        private RandomGenerator random = new Random();
        private SslProvider sslProvider = TlsProviders.preferred();
        private MemoryBudget memoryBudget = MemoryBudget.jvm();

        private Builder(TunnelConfig config) {
            this.config = requireNonNull(config, "config");
        }

        /** TLS material to use instead of loading (and hot-reloading) {@code --ca-cert}/{@code --agent-cert}. */
        public Builder tlsMaterial(TlsMaterial value) {
            material = requireNonNull(value, "tlsMaterial");
            return this;
        }

        public Builder registry(PrometheusRegistry value) {
            registry = requireNonNull(value, "registry");
            return this;
        }

        public Builder clock(Clock value) {
            clock = requireNonNull(value, "clock");
            return this;
        }

        /** Replaces the header-based count, e.g. with a lease counter ({@code --count-server-leases}). */
        public Builder serverCounter(ServerCounter value) {
            serverCounter = requireNonNull(value, "serverCounter");
            return this;
        }

        /** Event loops to run on (created with {@link Transports#newGroup}); by default the set owns its own. */
        public Builder eventLoopGroup(EventLoopGroup value) {
            group = requireNonNull(value, "eventLoopGroup");
            return this;
        }

        /**
         * TLS implementation of the server connections; default {@link TlsProviders#preferred()} (BoringSSL where it
         * loads). Tests pin {@link SslProvider#JDK} to cover the fallback.
         */
        /** The budget whose {@value TargetBudget#ACCOUNT} account bounds target buffers; default the JVM's. */
        public Builder memoryBudget(MemoryBudget value) {
            memoryBudget = java.util.Objects.requireNonNull(value, "memoryBudget");
            return this;
        }

        public Builder sslProvider(SslProvider value) {
            sslProvider = requireNonNull(value, "sslProvider");
            return this;
        }

        public Builder random(RandomGenerator value) {
            random = requireNonNull(value, "random");
            return this;
        }

        public TunnelClientSet build() {
            if (registry == null) {
                throw new IllegalStateException("registry: not set (expected: the PrometheusRegistry the agent"
                        + " exposes on /metrics)");
            }
            if (config.countServerLeases() && serverCounter == ServerCounter.FROM_HEADERS) {
                throw new IllegalStateException("--count-server-leases: true without a lease ServerCounter"
                        + " (expected: serverCounter(...) counting valid " + config.leaseLabelSelector()
                        + " Leases in " + config.leaseNamespace() + ")");
            }
            return new TunnelClientSet(this);
        }
    }
}
