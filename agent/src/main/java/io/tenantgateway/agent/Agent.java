package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.admin.AdminServer;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.HealthServer;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.k8s.KubernetesQuotaLookup;
import io.tenantgateway.agent.k8s.LeaseServerCounter;
import io.tenantgateway.agent.k8s.SecretTlsMaterial;
import io.tenantgateway.agent.k8s.WebhookConfigurationManager;
import io.tenantgateway.agent.locks.AllocationController;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.tunnel.client.DrainReport;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every part from {@link AgentConfig}, starts them in dependency order (health, TLS
 * material, Kubernetes client, informers, devices, tunnel, webhook, admin) and stops them in reverse.
 *
 * <p>Shutdown is two-phase, as the konnectivity protocol wants it: {@link #drain()} fails readiness, sends DRAIN on
 * every server stream (servers stop routing new dials here) and waits for open tunnels to finish, up to the grace
 * period; {@link #close()} then releases everything. Both are idempotent and safe from a signal handler thread.
 */
public final class Agent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    private static final Duration TLS_POLL = Duration.ofSeconds(10);

    private final AgentConfig config;
    private final Clock clock;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final Object lifecycle = new Object();
    private volatile boolean draining;
    private boolean startCalled;
    private boolean closed;

    private Vertx vertx;
    private HealthServer health;
    private KubernetesClient kubernetes;
    private DeviceRegistrar devices;
    private AllocationController allocation;
    private TunnelClientSet tunnel;
    private WebhookServer webhook;
    private AdminServer admin;

    public Agent(AgentConfig config, Clock clock) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
    }

    /** Starts every enabled part. Idempotent; a failure closes what already started and rethrows. */
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
                throw e;
            }
        }
    }

    private void doStart() {
        log.info("starting tenant-gateway {} config={}", io.tenantgateway.agent.TenantGatewayCommand.Version.version(),
                config.describe());
        if (config.webhook().isEmpty() && config.devices().isEmpty() && config.allocation().isEmpty()) {
            log.info("HAMi parts off (no --webhook-tls-cert, --device-source=none, no lock controller): running as a"
                    + " pure konnectivity-agent");
        }
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(4));
        started.push(() -> vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));

        // Liveness first: a slow informer sync must not get the pod killed.
        health = new HealthServer(vertx, config.tunnel().healthServerHost(), config.tunnel().healthServerPort(),
                registry);
        health.addCheck(new HealthCheck("shutdown", () -> draining ? HealthCheck.Result.failed("draining")
                : HealthCheck.Result.OK));
        health.start();
        started.push(health);

        if (config.needsKubernetes()) {
            kubernetes = KubernetesClients.create(config.tunnel().kubeconfig());
            started.push(kubernetes);
        }
        if (config.devices().isPresent()) {
            var deviceConfig = config.devices().get();
            devices = new DeviceRegistrar(deviceConfig, deviceConfig.createSource().orElseThrow(), kubernetes, clock,
                    registry);
            health.addCheck(devices.readinessCheck());
            devices.start();
            started.push(devices);
        }
        if (config.allocation().isPresent()) {
            DeviceRegistrar registrar = devices;
            allocation = new AllocationController(kubernetes, config.allocation().get(),
                    registrar == null ? Set::of : registrar::registeredDeviceIds, registry, clock);
            health.addCheck(new HealthCheck("lock-controller-synced", () -> allocation.synced() ? HealthCheck.Result.OK
                    : HealthCheck.Result.failed("pod and node informers not synced")));
            allocation.start();
            started.push(allocation);
        }

        TunnelClientSet.Builder tunnelBuilder = TunnelClientSet.builder(config.tunnel()).registry(registry)
                .clock(clock);
        if (config.tunnel().countServerLeases()) {
            LeaseServerCounter leases = new LeaseServerCounter(kubernetes, config.tunnel().leaseNamespace(),
                    config.tunnel().leaseLabelSelector(), clock);
            leases.start();
            started.push(leases);
            tunnelBuilder.serverCounter(leases);
        }
        tunnel = tunnelBuilder.build();
        health.addCheck(new HealthCheck("server-connected", () -> tunnel.isReady() ? HealthCheck.Result.OK
                : HealthCheck.Result.failed(tunnel.readinessFailure())));
        tunnel.start();
        started.push(tunnel);

        if (config.webhook().isPresent()) {
            startWebhook(config.webhook().get());
        }

        admin = new AdminServer(vertx, config.tunnel().adminBindAddress(), config.tunnel().adminServerPort(), this);
        admin.start();
        started.push(admin);
        log.info("tenant-gateway started parts={} health-port={} admin-port={}", parts(), health.boundPort(),
                admin.boundPort());
    }

    private void startWebhook(AgentConfig.WebhookPart part) {
        TlsMaterial serving;
        String servingSource;
        if (part.tlsSecret().isPresent()) {
            SecretTlsMaterial secret = new SecretTlsMaterial(kubernetes, part.tlsSecret().get());
            secret.start();
            started.push(secret);
            serving = secret;
            servingSource = "Secret " + part.tlsSecret().get();
        } else {
            Path cert = part.tlsCert().orElseThrow();
            ReloadingTlsMaterial files = ReloadingTlsMaterial.load(part.clientCa().isPresent()
                    ? TlsFiles.identityAndTrust(cert, part.tlsKey().orElseThrow(), part.clientCa().get())
                    : TlsFiles.identity(cert, part.tlsKey().orElseThrow()), TLS_POLL);
            files.start();
            started.push(files);
            serving = files;
            servingSource = cert.toString();
        }
        WebhookServer.Builder builder = WebhookServer.builder(part.config()).serverTls(serving).registry(registry)
                .clock(clock).vertx(vertx)
                .deviceConfig(part.deviceConfig().map(DeviceConfig::load).orElse(DeviceConfig.defaults()));
        if (part.upstreamCa().isPresent()) {
            ReloadingTlsMaterial upstreamTrust = ReloadingTlsMaterial.load(TlsFiles.trustOnly(part.upstreamCa().get()),
                    TLS_POLL);
            upstreamTrust.start();
            started.push(upstreamTrust);
            builder.upstreamTls(upstreamTrust);
        }
        if (kubernetes != null) {
            KubernetesQuotaLookup quota = new KubernetesQuotaLookup(kubernetes);
            quota.start();
            started.push(quota);
            builder.quotaLookup(quota);
        } else {
            log.info("webhook quota check off: no Kubernetes access configured (ResourceQuota limits.nvidia.com/*"
                    + " are not enforced at admission; the scheduler still enforces them)");
        }
        webhook = builder.build();
        webhook.start();
        started.push(webhook);
        health.addCheck(new HealthCheck("webhook-serving", () -> draining ? HealthCheck.Result.failed("draining")
                : webhook.isListening() ? HealthCheck.Result.OK : HealthCheck.Result.failed("not listening")));
        config.webhookConfiguration().ifPresent(managed -> {
            TlsMaterial ca = serving;
            String caSource = servingSource;
            if (managed.caBundle().isPresent()) {
                ReloadingTlsMaterial caFile = ReloadingTlsMaterial.load(TlsFiles.trustOnly(managed.caBundle().get()),
                        TLS_POLL);
                caFile.start();
                started.push(caFile);
                ca = caFile;
                caSource = managed.caBundle().get().toString();
            }
            WebhookConfigurationManager manager = new WebhookConfigurationManager(kubernetes, managed.name(), ca,
                    caSource);
            manager.start();
            started.push(manager);
        });
        if (part.config().clientAuth() != ClientAuthMode.NONE) {
            log.info("webhook requires client certificates from {}", part.clientCa().orElseThrow());
        }
    }

    private String parts() {
        return "tunnel" + (webhook != null ? ",webhook" : "") + (devices != null ? ",devices" : "")
                + (allocation != null ? ",lock-controller" : "");
    }

    /**
     * First phase of shutdown: readiness fails, DRAIN goes to every server, and open tunnels get until
     * {@code deadline} to be closed by their peers (the webhook keeps serving calls that arrive on them). Then each
     * server stream is half-closed and ended by its server, so nothing the agent queued is dropped; only at the
     * deadline is what is left cut (see {@link TunnelClientSet#drainAndClose}). Blocks until then.
     *
     * @return whether every tunnel was closed by its peer and every server received all its data
     */
    public boolean drain(Instant deadline) {
        synchronized (lifecycle) {
            if (draining || tunnel == null) {
                draining = true;
                return tunnel == null || tunnel.openTunnels() == 0;
            }
            draining = true;
        }
        log.info("draining: readiness off, DRAIN sent to servers, waiting for {} open tunnel(s) until {}",
                tunnel.openTunnels(), deadline);
        DrainReport report = awaitDrained(tunnel.drainAndClose(deadline), deadline);
        if (report == null) {
            return false;
        }
        if (report.lossless()) {
            log.info("drained: no open tunnels; every server stream ended after its half-close servers={}",
                    report.servers().size());
            return true;
        }
        log.warn("shutdown grace over: cut {} tunnel(s) servers=[{}]", report.tunnelsCut(), report.describeCuts());
        return false;
    }

    /** How long past the grace deadline {@link #drain} waits for the tunnel to report. */
    private static final Duration DRAIN_SLACK = Duration.ofSeconds(5);

    /** The report, or {@code null} (logged) when the tunnel did not finish shortly after the deadline. */
    private DrainReport awaitDrained(CompletableFuture<DrainReport> report, Instant deadline) {
        // The tunnel cuts what is left at the deadline itself; the slack only covers a stuck event loop.
        long waitMillis = Math.max(0, Duration.between(clock.instant(), deadline).toMillis()) + DRAIN_SLACK.toMillis();
        try {
            return report.get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.warn("shutdown grace over and the tunnel did not finish within {}; closing it with {} tunnel(s)"
                    + " open", DRAIN_SLACK, tunnel.openTunnels());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("drain interrupted; closing the tunnel with {} tunnel(s) open", tunnel.openTunnels());
        } catch (ExecutionException e) {
            throw new IllegalStateException("drain failed", e.getCause());
        }
        return null;
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
            closeStarted();
        }
        log.info("tenant-gateway stopped");
    }

    private void closeStarted() {
        while (!started.isEmpty()) {
            AutoCloseable part = started.pop();
            try {
                part.close();
            } catch (Exception e) {
                log.warn("closing {} failed: {}", part.getClass().getSimpleName(), e.toString());
            }
        }
    }

    // --- read-only views for the admin server and tests ------------------------------------------------------

    public AgentConfig config() {
        return config;
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    public Optional<TunnelClientSet> tunnel() {
        return Optional.ofNullable(tunnel);
    }

    public Optional<WebhookServer> webhook() {
        return Optional.ofNullable(webhook);
    }

    public Optional<DeviceRegistrar> devices() {
        return Optional.ofNullable(devices);
    }

    public Optional<AllocationController> allocation() {
        return Optional.ofNullable(allocation);
    }

    public Optional<HealthServer> health() {
        return Optional.ofNullable(health);
    }

    public Optional<AdminServer> admin() {
        return Optional.ofNullable(admin);
    }

    /** Readiness of every check, by name, for the status page. */
    public Map<String, HealthCheck.Result> readiness() {
        return health == null ? Map.of() : health.checks().stream()
                .collect(Collectors.toMap(HealthCheck::name, HealthCheck::run, (a, b) -> a,
                        java.util.LinkedHashMap::new));
    }
}
