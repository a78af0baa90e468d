package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.vertx.ConnectionGuard;
import io.tenantgateway.certs.TlsFailures;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.memory.MemoryBudget;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.vertx.VertxTls;
import io.tenantgateway.webhook.policy.AdmissionPolicy;
import io.tenantgateway.webhook.policy.ClusterDeviceState;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.NvidiaConfig;
import io.tenantgateway.webhook.proxy.ReverseProxyHandler;
import io.tenantgateway.webhook.quota.QuotaLookup;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HAMi-compatible mutating webhook (and optional admission reverse proxy) over HTTPS.
 *
 * <p>TLS 1.2+ from a {@link TlsMaterial}: the key and trust managers read the material on every handshake, so a
 * {@code ReloadingTlsMaterial} rotates the serving certificate without a restart while open connections keep the
 * certificate they negotiated. With {@link io.tenantgateway.certs.ClientAuthMode#REQUIRE} callers must present a
 * client certificate signed by the material's CA.
 *
 * <p>Lifecycle: {@link #start()} binds and blocks until listening (call it from the owner's thread, never from an
 * event loop; a busy port fails with {@link AddressInUseException}); {@link #close()} stops accepting, closes the
 * upstream client and, when the server created its own Vert.x, that too. Both are idempotent. The owner starts and
 * closes the TLS material, the quota lookup's sources and a shared Vert.x.
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}: a bind failure must reach callers as the typed
 * {@link AddressInUseException}, which the standalone {@code webhook} command catches by type to exit 2 naming
 * {@code --listen}; the base would wrap it in an {@code IllegalStateException}.
 */
public final class WebhookServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);
    /** A connection that sends nothing for this long is closed (slow or stuck callers hold no socket forever). */

    private final WebhookConfig config;
    private final TlsMaterial serverTls;
    private final TlsMaterial upstreamTls;
    /** The policy for the current device configuration; swapped whole, read once per decision. */
    private final AtomicReference<AdmissionPolicy> policy = new AtomicReference<>();
    private final QuotaLookup quota;
    private final boolean quotaConfigured;
    private final Clock clock;
    private final Vertx sharedVertx;
    private final WebhookMetrics metrics;
    private final RecentAdmissions recent;
    private final MemoryBudget.Account bodyAccount;

    private Vertx vertx;
    private boolean ownsVertx;
    private ReverseProxyHandler proxy;
    private HttpServer server;
    private DecisionWorkers workers;
    private volatile ConnectionGuard guard;
    private boolean started;
    private boolean closed;

    private WebhookServer(Builder builder) {
        this.config = builder.config;
        this.serverTls = requireNonNull(builder.serverTls, "serverTls");
        this.upstreamTls = builder.upstreamTls;
        this.quotaConfigured = builder.quota != null;
        this.quota = builder.quota == null ? QuotaLookup.NONE : builder.quota;
        this.policy.set(new AdmissionPolicy(config.policy(), builder.devices, quota));
        this.clock = builder.clock;
        this.sharedVertx = builder.vertx;
        this.metrics = new WebhookMetrics(builder.registry == null ? new PrometheusRegistry() : builder.registry);
        this.recent = new RecentAdmissions(config.recentAdmissions());
        this.bodyAccount = builder.bodyAccount != null ? builder.bodyAccount : RequestBodies.defaultAccount();
        if (config.upstream().isPresent() && upstreamTls == null) {
            throw new ConfigException("--upstream-ca", "missing",
                    "the CA that signs the upstream webhook's certificate, since --upstream is set");
        }
        if (serverTls.current().identityOrNull() == null) {
            throw new IllegalArgumentException("serverTls: no certificate and key (expected: the webhook's serving"
                    + " identity)");
        }
    }

    public static Builder builder(WebhookConfig config) {
        return new Builder(config);
    }

    /** Binds and starts serving. Idempotent; on failure everything started is undone and the error rethrown. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("webhook server is closed");
        }
        if (started) {
            return;
        }
        if (Context.isOnEventLoopThread()) {
            throw new IllegalStateException("WebhookServer.start() blocks until listening: call it from the owner's"
                    + " thread, not from an event loop");
        }
        try {
            if (sharedVertx != null) {
                vertx = sharedVertx;
            } else {
                vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
                        .setInternalBlockingPoolSize(1));
                ownsVertx = true;
            }
            if (config.upstream().isPresent()) {
                proxy = new ReverseProxyHandler(vertx, config.upstream().get(), upstreamTls, clock);
            }
            // kube-apiserver speaks HTTP/2 to webhooks that offer it.
            HttpServerOptions options = config.limits().applyTo(new HttpServerOptions()
                    .setHost(config.host())
                    .setPort(config.port())
                    .setUseAlpn(true)
                    .setAlpnVersions(List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1)));
            VertxTls.configureServer(options, serverTls, config.clientAuth(), clock);
            workers = new DecisionWorkers();
            AdmissionHandler handler = new AdmissionHandler(config, policy::get, proxy, metrics, recent, clock,
                    new RequestBodies(bodyAccount, System::nanoTime, metrics::bodyCut), workers);
            try {
                io.vertx.core.http.HttpServer created = vertx.createHttpServer(options);
                guard = new ConnectionGuard(vertx, "webhook", config.limits());
                server = await(created.requestHandler(guard.install(created, handler))
                        .exceptionHandler(WebhookServer::connectionFailed).listen(), START_TIMEOUT,
                        "listen on " + config.host() + ":" + config.port());
            } catch (IllegalStateException e) {
                if (AddressInUseException.isAddressInUse(e)) {
                    throw new AddressInUseException("webhook", config.host(), config.port(), e);
                }
                throw e;
            }
            started = true;
            logStarted();
        } catch (RuntimeException e) {
            closeResources();
            throw e;
        }
    }

    /** The connection guard's view (open, rejected, timed-out connections), once listening. */
    public java.util.Optional<ConnectionGuard> connections() {
        return java.util.Optional.ofNullable(guard);
    }

    /**
     * Makes every decision that starts from now on use {@code devices} (HAMi's ConfigMap changed): the policy is
     * replaced whole with one atomic swap, so a decision sees either the old or the new configuration, never a
     * mix, and nothing restarts. Callable from any thread, before or after {@link #start()}.
     */
    public void updateDeviceConfig(DeviceConfig devices) {
        requireNonNull(devices, "devices");
        AdmissionPolicy previous = policy.getAndUpdate(current -> new AdmissionPolicy(config.policy(), devices,
                current.clusterState(), quota));
        if (!previous.devices().equals(devices)) {
            NvidiaConfig nvidia = devices.nvidia();
            log.info("webhook device config now in use: nvidia.resourceCountName={} nvidia.resourceMemoryName={}"
                    + " nvidia.resourceCoreName={} nvidia.defaultGPUNum={} nvidia.overwriteEnv={}"
                    + " nvidia.gpuCorePolicy={} nvidia.runtimeClassName='{}'", nvidia.resourceCountName(),
                    nvidia.resourceMemoryName(), nvidia.resourceCoreName(), nvidia.defaultGpuNum(),
                    nvidia.overwriteEnv(), nvidia.gpuCorePolicy(), nvidia.runtimeClassName());
        }
    }

    /** The device configuration decisions use now. */
    public DeviceConfig deviceConfig() {
        return policy.get().devices();
    }

    /**
     * Makes every decision that starts from now on use {@code state} (the scheduler-side state the AWS Neuron and
     * Enflame backends read, learnt from the cluster's Nodes): the policy is rebuilt with the device configuration
     * in use and swapped atomically, as in {@link #updateDeviceConfig}. Callable from any thread.
     */
    public void updateClusterState(ClusterDeviceState state) {
        requireNonNull(state, "state");
        policy.updateAndGet(current -> current.clusterState().equals(state) ? current
                : new AdmissionPolicy(config.policy(), current.devices(), state, quota));
    }

    /** The scheduler-side state decisions use now ({@link ClusterDeviceState#DEFAULTS} until told otherwise). */
    public ClusterDeviceState clusterState() {
        return policy.get().clusterState();
    }

    private void logStarted() {
        NvidiaConfig nvidia = deviceConfig().nvidia();
        log.info("webhook listening on https://{}:{}{} maxConnections={} clientAuth={} schedulerName={} forceOverwriteDefaultScheduler={}"
                + " hamiCompat={} nvidia.resourceCountName={} nvidia.defaultGPUNum={} nvidia.overwriteEnv={}"
                + " nvidia.gpuCorePolicy={} nvidia.runtimeClassName='{}' upstream={}",
                config.host(), port(), config.path(), config.limits().maxConnections(), config.clientAuth(),
                config.policy().schedulerName(),
                config.policy().forceOverwriteDefaultScheduler(), config.policy().compat(),
                nvidia.resourceCountName(), nvidia.defaultGpuNum(), nvidia.overwriteEnv(), nvidia.gpuCorePolicy(),
                nvidia.runtimeClassName(), config.upstream().map(u -> u.url() + " path=" + u.path() + " timeout="
                        + u.timeout() + " failurePolicy=" + u.failurePolicy()).orElse("none"));
        if (!quotaConfigured) {
            log.info("quota check disabled: no ResourceQuota lookup configured, pods are not checked against"
                    + " limits.{} / limits.{}", nvidia.resourceMemoryName(), nvidia.resourceCoreName());
        }
    }

    /** A caller's TLS handshake failed (untrusted or missing client certificate, no common protocol). */
    private static void connectionFailed(Throwable failure) {
        log.warn("webhook connection failed before HTTP: {}", TlsFailures.describe(failure));
    }

    /** The bound port (the real one when the config asked for 0). */
    public synchronized int port() {
        if (server == null) {
            throw new IllegalStateException("webhook server not started");
        }
        return server.actualPort();
    }

    /** Whether the server is started and not closed (never throws, for health checks). */
    public synchronized boolean isListening() {
        return started && server != null;
    }

    public WebhookConfig config() {
        return config;
    }

    /** Whether a {@link QuotaLookup} was given (the standalone command runs without one). */
    public boolean quotaCheckEnabled() {
        return quotaConfigured;
    }

    /** The heap account admission bodies in flight reserve from. */
    public MemoryBudget.Account bodyAccount() {
        return bodyAccount;
    }

    /** The latest admissions, for a {@code /debug/admissions} endpoint. */
    public RecentAdmissions recentAdmissions() {
        return recent;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        boolean wasStarted = started;
        closeResources();
        if (wasStarted) {
            log.info("webhook stopped");
        }
    }

    private void closeResources() {
        if (server != null) {
            try {
                await(server.close(), CLOSE_TIMEOUT, "close the HTTPS server");
            } catch (RuntimeException e) {
                log.warn("closing the webhook's HTTPS server failed: {}", e.getMessage());
            }
            server = null;
        }
        if (workers != null) {
            workers.close();
            workers = null;
        }
        if (proxy != null) {
            proxy.close();
            proxy = null;
        }
        if (ownsVertx && vertx != null) {
            try {
                await(vertx.close(), CLOSE_TIMEOUT, "close Vert.x");
            } catch (RuntimeException e) {
                log.warn("closing the webhook's Vert.x failed: {}", e.getMessage());
            }
        }
        vertx = null;
        ownsVertx = false;
        started = false;
    }

    private static <T> T await(Future<T> future, Duration timeout, String what) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException("webhook: cannot " + what + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException("webhook: cannot " + what + " within " + timeout.toSeconds() + "s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("webhook: interrupted while waiting to " + what, e);
        }
    }

    /**
     * Assembles a {@link WebhookServer}. Required: the config and the serving TLS material; the upstream CA
     * material when the config has an upstream. Optional: device config (HAMi's defaults), quota lookup (none:
     * quota checks off), metrics registry (a private one), clock (UTC), a shared Vert.x (else the server owns one).
     */
    public static final class Builder {
        private final WebhookConfig config;
        private TlsMaterial serverTls;
        private TlsMaterial upstreamTls;
        private DeviceConfig devices = DeviceConfig.defaults();
        private QuotaLookup quota;
        private PrometheusRegistry registry;
        private Clock clock = Clock.systemUTC();
        private Vertx vertx;
        private MemoryBudget.Account bodyAccount;

        private Builder(WebhookConfig config) {
            this.config = requireNonNull(config, "config");
        }

        /** Serving certificate and key, plus the CA for client certificates when client auth is on. */
        public Builder serverTls(TlsMaterial material) {
            this.serverTls = requireNonNull(material, "material");
            return this;
        }

        /** The CA the upstream webhook's certificate is verified against. */
        public Builder upstreamTls(TlsMaterial material) {
            this.upstreamTls = requireNonNull(material, "material");
            return this;
        }

        public Builder deviceConfig(DeviceConfig value) {
            this.devices = requireNonNull(value, "value");
            return this;
        }

        /** Where ResourceQuota limits and usage come from; must answer from memory (see {@link QuotaLookup}). */
        public Builder quotaLookup(QuotaLookup value) {
            this.quota = requireNonNull(value, "value");
            return this;
        }

        public Builder registry(PrometheusRegistry value) {
            this.registry = requireNonNull(value, "value");
            return this;
        }

        public Builder clock(Clock value) {
            this.clock = requireNonNull(value, "value");
            return this;
        }

        /** Runs on the owner's Vert.x (not closed by the server) instead of a private one. */
        public Builder vertx(Vertx value) {
            this.vertx = requireNonNull(value, "value");
            return this;
        }

        /**
         * The heap account admission bodies in flight reserve from; default: {@value RequestBodies#ACCOUNT}, 30 %
         * of this JVM's heap ({@link MemoryBudget#jvm()}), at least 4 MiB.
         */
        public Builder bodyAccount(MemoryBudget.Account value) {
            this.bodyAccount = requireNonNull(value, "value");
            return this;
        }

        public WebhookServer build() {
            return new WebhookServer(this);
        }
    }
}
