package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.memory.MemoryBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.admin.AdminServer;
import io.tenantgateway.agent.cli.PortInUseException;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.agent.health.DeferredCheck;
import io.tenantgateway.agent.health.MemoryBudgetMetrics;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.HealthServer;
import io.tenantgateway.agent.k8s.DeviceConfigWatch;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.HamiWebhookCoexistence;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.k8s.KubernetesQuotaLookup;
import io.tenantgateway.agent.k8s.LeaseServerCounter;
import io.tenantgateway.agent.k8s.SecretTlsMaterial;
import io.tenantgateway.agent.k8s.WebhookConfigurationManager;
import io.tenantgateway.agent.locks.AllocationController;
import io.tenantgateway.agent.webhookcerts.WebhookCertificateController;
import io.tenantgateway.agent.locks.HamiAllocator;
import io.tenantgateway.agent.locks.LockMetrics;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.devices.ObservedDeviceSource;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.tunnel.client.DrainReport;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import io.tenantgateway.tunnel.client.ServerCounter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.LinkedHashMap;
import java.util.function.Supplier;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every part from {@link AgentConfig}, starts them in order (tunnel; health with every
 * part's readiness check; admin; then the HAMi parts: webhook, device registration, and in the background,
 * retrying until the Kubernetes API answers, lock controller, quota lookup, Secret TLS, CA bundle, lease counter)
 * and stops them in reverse. The tunnel never waits for the API (DESIGN.md "Start order").
 *
 * <p>Shutdown is two-phase, as the konnectivity protocol wants it: {@link #drain()} fails readiness, sends DRAIN on
 * every server stream (servers stop routing new dials here) and waits for open tunnels to finish, up to the grace
 * period; {@link #close()} then releases everything. Both are idempotent and safe from a signal handler thread.
 */
public final class Agent implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    private static final Duration TLS_POLL = Duration.ofSeconds(10);

    private final AgentConfig config;
    /** This node: known from the flags, or discovered from the agent's pod in the background. */
    private final NodeIdentity node;
    private final Clock clock;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final Object lifecycle = new Object();
    private volatile boolean draining;
    private boolean startCalled;
    private boolean closed;

    private final CompletableFuture<RuntimeException> fatal = new CompletableFuture<>();

    // Set during start; read by the health server's event loop and the admin server, hence volatile.
    /** Only for the parts that run on Vert.x (the webhook and its upstream proxy); see {@link #vertx()}. */
    private Vertx vertx;
    private boolean vertxClosed;
    private final Object vertxLock = new Object();
    private volatile HttpLoop http;
    private volatile HealthServer health;
    private volatile KubernetesClient kubernetes;
    private volatile DeviceRegistrar devices;
    private volatile AllocationController allocation;
    private volatile DevicePlugin devicePlugin;
    private LockMetrics lockMetrics;
    private volatile TunnelClientSet tunnel;
    private volatile WebhookServer webhook;
    private volatile WebhookConfigurationManager webhookConfigManager;
    private volatile WebhookCertificateController webhookCertificates;
    private volatile AdminServer admin;
    /** HAMi's device ConfigMap watch, when the webhook reads its config through the API. */
    private volatile DeviceConfigWatch deviceConfigWatch;
    /** {@code source.host} of the agent's Events: the node name once known, else the agent id. */
    private volatile String eventHost;
    private ScheduledExecutorService partsScheduler;
    /** The lease counter once built; until then (and until it listed the leases) the servers' count is used. */
    private final AtomicReference<ServerCounter> leaseCounter = new AtomicReference<>();

    public Agent(AgentConfig config, Clock clock) {
        this(config, clock, NodeIdentity.of(config.nodeName()));
    }

    /**
     * @param config the configuration, never rebuilt; when the node is {@linkplain NodeIdentity#discovered()
     *        discovered}, it has no node name (its parts' flags were checked with a placeholder)
     * @param node this node; when discovered, {@link NodeIdentity#discover()} is retried in the background after the
     *        tunnel started, and the parts that need the name start, with {@link AgentConfig#forNode}, once it is known
     */
    public Agent(AgentConfig config, Clock clock, NodeIdentity node) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
        this.node = requireNonNull(node, "node");
    }

    /**
     * Starts every enabled part: health (with every part's readiness check), tunnel, admin, then the HAMi parts
     * (the ones that need the API in the background). Idempotent; a failure closes what already started, leaves the
     * agent closed (a later {@code start()} throws) and rethrows.
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
                if (partsScheduler != null) {
                    partsScheduler.shutdownNow();
                }
                closeStarted();
                closed = true;
                throw e;
            }
        }
    }

    private void doStart() {
        log.info("starting tenant-gateway {} config={}", io.tenantgateway.agent.Version.version(),
                describeConfig());
        if (config.webhook().isEmpty() && config.devices().isEmpty() && config.allocation().isEmpty()) {
            log.info("HAMi parts off (no --webhook-tls-cert, --device-source=none, no lock controller): running as a"
                    + " pure konnectivity-agent");
        }
        // The tunnel first: it is what the control plane needs to reach anything on this node, so it waits for
        // nothing (with --count-server-leases it uses the servers' count until the leases are listed). Its first
        // connection attempt runs on the tunnel's own event loop while the rest is built here.
        TunnelClientSet.Builder tunnelBuilder = TunnelClientSet.builder(config.tunnel()).registry(registry)
                .clock(clock);
        if (config.tunnel().countServerLeases()) {
            tunnelBuilder.serverCounter(fromHeaders -> {
                ServerCounter counter = leaseCounter.get();
                return counter == null ? fromHeaders : counter.serverCount(fromHeaders);
            });
        }
        TunnelClientSet client = tunnelBuilder.build();
        client.start();
        tunnel = client;
        started.push(client);
        // process_* and jvm_* on /metrics, as upstream has process_* and go_*; after the tunnel: it loads the
        // management beans, which the first connection should not wait for.
        JvmMetrics.builder().register(registry);
        MemoryBudgetMetrics.register(MemoryBudget.jvm(), registry);

        // Vert.x is made on first use by a part that runs on it (the webhook); it closes here in the order, after
        // every part. A tunnel-only agent never loads it (DESIGN.md "Footprint").
        started.push(this::closeVertx);
        // The health and admin ports: plain Netty on one event loop of their own.
        http = new HttpLoop();
        http.start();
        started.push(http);

        // Every enabled part's readiness check exists before the health port accepts a connection (a part that has
        // not started yet is "not ready" with its name), so /readyz is never 200 early. The checks come from the
        // configuration alone: no HAMi part is built yet.
        health = new HealthServer(http, config.servers().healthServerHost(), config.servers().healthServerPort(),
                registry);
        health.addCheck(new HealthCheck("shutdown", () -> draining ? HealthCheck.Result.failed("draining")
                : HealthCheck.Result.OK));
        health.addCheck(new HealthCheck("server-connected", () -> {
            TunnelClientSet current = tunnel;
            return current == null ? HealthCheck.Result.failed("tunnel not started yet")
                    : current.isReady() ? HealthCheck.Result.OK : HealthCheck.Result.failed(current.readinessFailure());
        }));
        Map<String, DeferredCheck> checks = new LinkedHashMap<>();
        for (String name : partChecks()) {
            DeferredCheck check = new DeferredCheck(name);
            checks.put(name, check);
            health.addCheck(check.check());
        }
        health.start();
        started.push(health);

        // The dial policy's defaults keep the admin port closed on every address of this host: its interfaces'
        // addresses are added before the admin port listens, and with --admin-server-port=0 its port once bound
        // (nothing listens there before).
        DialPolicy.Defaults dialDefaults = client.dialPolicy().defaults();
        boolean guardAdmin = !dialDefaults.equals(DialPolicy.Defaults.NONE);
        if (guardAdmin) {
            List<java.net.InetAddress> own = new ArrayList<>(dialDefaults.hostAddresses());
            own.addAll(interfaceAddresses());
            client.dialPolicy(client.dialPolicy().withDefaults(dialDefaults.withHostAddresses(own)));
        }
        admin = new AdminServer(http, config.servers().adminBindAddress(), config.servers().adminServerPort(),
                new AgentAdminStatus(this), Version.version(), clock, new AdminServer.Options(health.boundPort(),
                        config.profiling(), config.contentionProfiling()));
        admin.start();
        started.push(admin);
        if (guardAdmin) {
            DialPolicy policy = client.dialPolicy();
            client.dialPolicy(policy.withDefaults(policy.defaults().withAdminPort(admin.boundPort())));
            log.info("dial policy in force policy=\"{}\"", client.dialPolicy().describe());
        }

        if (config.needsKubernetes()) {
            kubernetes = KubernetesClients.create(config.servers().kubeconfig()); // builds only: no API call yet
            started.push(kubernetes);
        }
        if (!node.discovered()) {
            startHamiParts(config, checks);
        } else {
            startNodeDiscovery(checks);
        }
        log.info("tenant-gateway started parts={} health-port={} admin-port={}", parts(), health.boundPort(),
                admin.boundPort());
    }

    /**
     * Kamaji's DaemonSet sets no NODE_NAME: the node name is read from this pod through the API, which may not answer
     * yet (retried in the background). Until then {@value #NODE_IDENTITY_CHECK} says so and the parts' checks say
     * "node name unknown"; the parts that need the name start once it is known.
     */
    private void startNodeDiscovery(Map<String, DeferredCheck> checks) {
        RetryingStart<AutoCloseable> discovery = retrying(NODE_IDENTITY_CHECK, "node name discovery (--node-name"
                + " unset; from pod " + node.pod().orElseThrow() + ")", () -> {
                    node.discover(); // runs the dependent below on this thread
                    return () -> { };
                }, done -> HealthCheck.Result.OK);
        HealthCheck discovering = discovery.check();
        String pod = node.pod().orElseThrow();
        for (DeferredCheck check : checks.values()) {
            if (check.name().equals(NODE_IDENTITY_CHECK)) {
                check.bind(new HealthCheck(NODE_IDENTITY_CHECK, () -> node.name().isPresent() ? HealthCheck.Result.OK
                        : HealthCheck.Result.failed("being discovered from pod " + pod + " (spec.nodeName) through"
                                + " the API: " + discovering.run().reason())));
                continue;
            }
            check.bind(new HealthCheck(check.name(), () -> {
                HealthCheck.Result result = discovering.run();
                return HealthCheck.Result.failed(result.ok() ? "starting" : "node name unknown: " + result.reason());
            }));
        }
        node.whenKnown().thenAccept(name -> {
            log.info("node name discovered from this pod's spec.nodeName: {}", name);
            log.info("tenant-gateway config with the discovered node name config={}", describeConfig());
            try {
                AgentConfig resolved = config.forNode(name);
                synchronized (lifecycle) {
                    if (!closed) {
                        startHamiParts(resolved, checks);
                    }
                }
            } catch (RuntimeException e) {
                // A bad value only the name could reveal, or a port taken: the process ends as at start.
                log.error("the parts that need the node name cannot start: {}", e.getMessage());
                fatal(e);
            }
        });
        started.push(discovery);
        discovery.start();
    }

    /** The effective configuration, with this node's name as {@link NodeIdentity} knows it now. */
    Map<String, String> describeConfig() {
        Map<String, String> out = new LinkedHashMap<>(config.describe());
        out.put("node-name", node.describe());
        return out;
    }

    /** This node's name: known, being discovered, or unset. */
    public NodeIdentity node() {
        return node;
    }

    /** This host's interface addresses (loopback aside: the policy always counts it); none if unreadable. */
    private static List<java.net.InetAddress> interfaceAddresses() {
        try {
            return java.net.NetworkInterface.networkInterfaces()
                    .flatMap(java.net.NetworkInterface::inetAddresses)
                    .filter(address -> !address.isLoopbackAddress())
                    .toList();
        } catch (java.net.SocketException e) {
            log.warn("cannot list this host's addresses ({}): the dial policy keeps the admin port closed on"
                    + " loopback and the admin bind address only", e.getMessage());
            return List.of();
        }
    }

    /**
     * The HAMi parts: the webhook listens at once where that is safe (DESIGN.md); everything that needs the API
     * starts in the background and retries until the API answers.
     *
     * @param parts the configuration with the node name known
     */
    private void startHamiParts(AgentConfig parts, Map<String, DeferredCheck> checks) {
        eventHost = parts.nodeName().orElse(config.tunnel().agentId());
        List<RetryingStart<?>> background = new ArrayList<>();
        if (config.tunnel().countServerLeases()) {
            LeaseServerCounter leases = new LeaseServerCounter(kubernetes, config.tunnel().leaseNamespace(),
                    config.tunnel().leaseLabelSelector(), clock, registry);
            leaseCounter.set(leases);
            background.add(retrying("server-leases", "server lease counter (--count-server-leases; the servers'"
                    + " servercount is used meanwhile)", () -> {
                        leases.start();
                        return leases;
                    }, c -> HealthCheck.Result.OK));
        }
        DevicePlugin plugin = parts.devicePlugin().map(part -> new DevicePlugin(part.plugin(),
                hamiAllocator(part), registry, reason -> {
                    DeviceRegistrar registrar = devices;
                    if (registrar != null) {
                        registrar.suspend(reason); // another plugin writes the register annotation
                    }
                }, Version.version(), clock)).orElse(null);
        if (parts.devices().isPresent()) {
            var deviceConfig = parts.devices().get();
            var source = deviceConfig.createSource().orElseThrow();
            if (plugin != null) {
                // kubelet and the register annotation list the same discovery.
                source = new ObservedDeviceSource(source, new ObservedDeviceSource.Observer() {
                    @Override
                    public void discovered(List<io.tenantgateway.hami.GpuDevice> found) {
                        plugin.updateDevices(found);
                    }

                    @Override
                    public void failed(String reason) {
                        plugin.discoveryFailed(reason);
                    }
                });
            }
            devices = new DeviceRegistrar(deviceConfig, source, kubernetes, clock, registry);
            checks.get(DEVICES_CHECK).bind(devices.readinessCheck());
        }
        if (plugin != null) {
            devicePlugin = plugin;
            plugin.start(); // probes the socket first: another plugin there suspends the registrar before it writes
            started.push(plugin);
            checks.get(DEVICE_PLUGIN_CHECK).bind(new HealthCheck(DEVICE_PLUGIN_CHECK, () -> {
                DevicePluginSnapshot snapshot = plugin.snapshot();
                return switch (snapshot.phase()) {
                    // Standing aside for HAMi's or NVIDIA's plugin is the right state (logged, doctor says why).
                    case REGISTERED, STANDING_ASIDE -> HealthCheck.Result.OK;
                    default -> HealthCheck.Result.failed(snapshot.detail());
                };
            }));
        }
        if (parts.allocation().isPresent()) {
            Supplier<AllocationController> newController = () -> new AllocationController(kubernetes,
                    parts.allocation().get(), lockMetrics(), clock);
            allocation = newController.get();
            RetryingStart<AllocationController> start = retrying(LOCKS_CHECK, "lock controller", () -> {
                // A failed start leaves a controller closed (Lifecycle): the next attempt builds a new one.
                AllocationController controller = allocation;
                if (controller.isClosed()) {
                    controller = newController.get();
                    allocation = controller;
                }
                controller.start();
                return controller;
            }, c -> c.synced() ? HealthCheck.Result.OK
                    : HealthCheck.Result.failed("pod and node informers not synced"));
            checks.get(LOCKS_CHECK).bind(start.check());
            background.add(start);
        }
        parts.webhook().ifPresent(part -> startWebhook(part, checks, background));
        if (devices != null) {
            devices.start();
            started.push(devices);
        }
        for (RetryingStart<?> part : background) {
            started.push(part);
            part.start();
        }
    }

    static final String NODE_IDENTITY_CHECK = "node-identity";
    static final String DEVICES_CHECK = "devices-registered";
    static final String DEVICE_PLUGIN_CHECK = "device-plugin-registered";
    static final String LOCKS_CHECK = "lock-controller-synced";
    static final String WEBHOOK_CHECK = "webhook-serving";
    static final String QUOTA_CHECK = "webhook-quota-synced";
    static final String CA_BUNDLE_CHECK = "webhook-ca-bundle";
    static final String CERTIFICATE_CHECK = "webhook-certificate";
    static final String DEVICE_CONFIG_CHECK = "webhook-device-config";

    /** The readiness checks of the enabled HAMi parts, known from the configuration before anything is built. */
    private List<String> partChecks() {
        List<String> names = new ArrayList<>();
        if (node.discovered()) {
            names.add(NODE_IDENTITY_CHECK);
        }
        if (config.devices().isPresent()) {
            names.add(DEVICES_CHECK);
        }
        if (config.devicePlugin().isPresent()) {
            names.add(DEVICE_PLUGIN_CHECK);
        }
        if (config.allocation().isPresent()) {
            names.add(LOCKS_CHECK);
        }
        if (config.webhook().isPresent()) {
            names.add(WEBHOOK_CHECK);
            if (config.needsKubernetes()) {
                names.add(QUOTA_CHECK);
            }
            if (config.webhookConfiguration().isPresent()) {
                names.add(CA_BUNDLE_CHECK);
            }
            if (config.webhook().flatMap(AgentConfig.WebhookPart::certificates).isPresent()) {
                names.add(CERTIFICATE_CHECK);
            }
            if (config.webhook().flatMap(AgentConfig.WebhookPart::deviceConfigMap).isPresent()) {
                names.add(DEVICE_CONFIG_CHECK);
            }
        }
        return names;
    }

    private <T extends AutoCloseable> RetryingStart<T> retrying(String checkName, String partName,
            RetryingStart.Attempt<T> attempt, java.util.function.Function<T, HealthCheck.Result> readiness) {
        KubernetesClient api = kubernetes;
        return new RetryingStart<>(checkName, partName, attempt, readiness,
                failure -> KubernetesClients.describeFailure(api, failure), partsScheduler(),
                Backoff.agentSync(RetryingStart.FIRST_RETRY, RetryingStart.RETRY_CAP).start(new Random()), this::fatal);
    }

    /**
     * The shared Vert.x (2 event loops, 4 workers), made on the first call: only the parts that run on it call this,
     * so a tunnel-only agent loads no Vert.x class. Any thread (the webhook with Secret TLS starts in the
     * background); after {@link #closeVertx} it throws.
     */
    private Vertx vertx() {
        synchronized (vertxLock) {
            if (vertxClosed) {
                throw new IllegalStateException("agent closed");
            }
            if (vertx == null) {
                vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(4));
            }
            return vertx;
        }
    }

    private void closeVertx() throws Exception {
        Vertx created;
        synchronized (vertxLock) {
            vertxClosed = true;
            created = vertx;
        }
        if (created != null) {
            created.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The device plugin's allocator, its failure bookkeeping started; closed after the plugin (pushed before it), so
     * no Allocate call runs when it stops.
     */
    private HamiAllocator hamiAllocator(AgentConfig.DevicePluginPart part) {
        HamiAllocator allocator = new HamiAllocator(kubernetes, part.allocator(), () -> devicePlugin.gpuUuids(),
                lockMetrics(), clock);
        allocator.start();
        started.push(allocator);
        return allocator;
    }

    /** The node-lock and allocation metrics, registered once for the lock controller and the allocator. */
    private synchronized LockMetrics lockMetrics() {
        if (lockMetrics == null) {
            LockMetrics metrics = new LockMetrics(registry);
            lockMetrics = metrics;
            started.push(metrics::unregister);
        }
        return lockMetrics;
    }

    private ScheduledExecutorService partsScheduler() {
        if (partsScheduler == null) {
            partsScheduler = Executors.newScheduledThreadPool(2, DaemonThreads.numbered("agent-parts"));
        }
        return partsScheduler;
    }

    /** A configuration error found after start (a background part): the runner exits 2 with it. */
    private void fatal(RuntimeException error) {
        fatal.complete(error);
    }

    /** Completes with a configuration error a background part ran into; the process should exit 2 with it. */
    public CompletableFuture<RuntimeException> fatalError() {
        return fatal;
    }

    /**
     * Starts the webhook and binds its readiness checks. With PEM files it listens at once (quota lookup and
     * CA-bundle management follow in the background); with {@code --webhook-tls-secret} it cannot serve before the
     * Secret is read, so listening is a background part too.
     */
    private void startWebhook(AgentConfig.WebhookPart part, Map<String, DeferredCheck> checks,
            List<RetryingStart<?>> background) {
        KubernetesQuotaLookup quota = kubernetes == null ? null : new KubernetesQuotaLookup(kubernetes);
        if (quota == null) {
            log.info("webhook quota check off: no Kubernetes access configured (ResourceQuota limits.nvidia.com/*"
                    + " are not enforced at admission; the scheduler still enforces them)");
        } else {
            RetryingStart<KubernetesQuotaLookup> start = retrying(QUOTA_CHECK, "webhook quota lookup", () -> {
                quota.start();
                return quota;
            }, q -> q.synced() ? HealthCheck.Result.OK : HealthCheck.Result.failed("ResourceQuota informer not synced"));
            checks.get(QUOTA_CHECK).bind(start.check());
            background.add(start);
        }
        config.webhookConfiguration().ifPresent(managed -> checks.get(CA_BUNDLE_CHECK).bind(
                new HealthCheck(CA_BUNDLE_CHECK, () -> {
                    WebhookConfigurationManager manager = webhookConfigManager;
                    if (manager == null) {
                        return HealthCheck.Result.failed("webhook not started yet");
                    }
                    String error = manager.lastError();
                    return error != null ? HealthCheck.Result.failed("MutatingWebhookConfiguration " + managed.name()
                            + ": " + error) : manager.synced() ? HealthCheck.Result.OK
                            : HealthCheck.Result.failed("MutatingWebhookConfiguration " + managed.name()
                                    + " not synced yet");
                })));
        DeviceConfig deviceConfig = part.deviceConfig().map(DeviceConfig::load).orElse(DeviceConfig.defaults());
        startDeviceConfigSources(part, checks, background);
        if (part.config().clientAuth() != ClientAuthMode.NONE) {
            log.info("webhook requires client certificates from {}", part.clientCa().orElseThrow());
        }
        if (part.certificates().isPresent()) {
            startSelfManagedWebhook(part, checks, background, deviceConfig, quota);
            return;
        }
        if (part.tlsSecret().isPresent()) {
            SecretTlsMaterial secret = new SecretTlsMaterial(kubernetes, part.tlsSecret().get());
            started.push(secret);
            String source = "Secret " + part.tlsSecret().get();
            RetryingStart<WebhookParts> start = retrying(WEBHOOK_CHECK, "webhook (TLS from " + source + ")", () -> {
                secret.start();
                try {
                    return startWebhookServer(part, secret, source, deviceConfig, quota);
                } catch (RuntimeException e) {
                    secret.close();
                    throw e;
                }
            }, parts -> webhookReadiness(parts.server()));
            checks.get(WEBHOOK_CHECK).bind(start.check());
            background.add(start);
            return;
        }
        Path cert = part.tlsCert().orElseThrow();
        ReloadingTlsMaterial files = ReloadingTlsMaterial.load(part.clientCa().isPresent()
                ? TlsFiles.identityAndTrust(cert, part.tlsKey().orElseThrow(), part.clientCa().get())
                : TlsFiles.identity(cert, part.tlsKey().orElseThrow()), TLS_POLL);
        files.start();
        started.push(files);
        WebhookParts server = startWebhookServer(part, files, cert.toString(), deviceConfig, quota);
        started.push(server);
        checks.get(WEBHOOK_CHECK).bind(new HealthCheck(WEBHOOK_CHECK, () -> webhookReadiness(server.server())));
    }

    /**
     * {@code --webhook-tls-self-managed}: the webhook listens (in the background, like with a Secret) once the
     * certificate controller serves a certificate, read from the Secret or created there; each attempt builds a new
     * controller (a failed start leaves one closed).
     */
    private void startSelfManagedWebhook(AgentConfig.WebhookPart part, Map<String, DeferredCheck> checks,
            List<RetryingStart<?>> background, DeviceConfig deviceConfig, KubernetesQuotaLookup quota) {
        var certificates = part.certificates().orElseThrow();
        checks.get(CERTIFICATE_CHECK).bind(new HealthCheck(CERTIFICATE_CHECK, () -> {
            WebhookCertificateController current = webhookCertificates;
            return current == null ? HealthCheck.Result.failed("not started yet") : current.readiness();
        }));
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).filter(h -> !h.isBlank())
                .orElse(node.name().orElse("tenant-gateway"));
        String source = "self-managed Secret " + certificates.secret();
        RetryingStart<WebhookParts> start = retrying(WEBHOOK_CHECK, "webhook (TLS from " + source + ")", () -> {
            WebhookCertificateController attempt = new WebhookCertificateController(kubernetes, certificates,
                    registry, clock, host);
            webhookCertificates = attempt;
            attempt.start();
            try {
                WebhookParts parts = startWebhookServer(part, attempt, source, deviceConfig, quota);
                List<AutoCloseable> owned = new ArrayList<>();
                owned.add(attempt); // closed last, after the server
                owned.addAll(parts.owned());
                return new WebhookParts(parts.server(), owned);
            } catch (RuntimeException e) {
                attempt.close();
                throw e;
            }
        }, parts -> webhookReadiness(parts.server()));
        checks.get(WEBHOOK_CHECK).bind(start.check());
        background.add(start);
    }

    /** The self-managed certificate controller, once started ({@code --webhook-tls-self-managed}). */
    public Optional<WebhookCertificateController> webhookCertificates() {
        return Optional.ofNullable(webhookCertificates);
    }

    /**
     * Where the webhook's device config comes from (the file wins; else HAMi's ConfigMap, watched in the
     * background) and, with API access, the check for HAMi's own webhook next to ours (no readiness check: it
     * warns, it does not stop serving).
     */
    private void startDeviceConfigSources(AgentConfig.WebhookPart part, Map<String, DeferredCheck> checks,
            List<RetryingStart<?>> background) {
        if (part.deviceConfig().isPresent()) {
            log.info("webhook device config from {} (--device-config wins: HAMi's ConfigMap is not watched)",
                    part.deviceConfig().get());
        } else if (part.deviceConfigMap().isPresent()) {
            DeviceConfigWatch watch = new DeviceConfigWatch(kubernetes, part.deviceConfigMap().get(), events(),
                    registry);
            deviceConfigWatch = watch;
            RetryingStart<DeviceConfigWatch> start = retrying(DEVICE_CONFIG_CHECK, "webhook device config (ConfigMap "
                    + watch.configMap() + ")", () -> {
                        watch.start();
                        return watch;
                    }, w -> {
                        DeviceConfigWatch.Readiness readiness = w.readiness();
                        return new HealthCheck.Result(readiness.ready(), readiness.detail());
                    });
            checks.get(DEVICE_CONFIG_CHECK).bind(start.check());
            background.add(start);
        } else {
            log.info("webhook device config: HAMi's defaults (no --device-config, --device-config-map=\"\")");
        }
        if (kubernetes != null) {
            String own = config.webhookConfiguration().map(AgentConfig.ManagedWebhookConfiguration::name)
                    .orElse(AgentCommand.DEFAULT_WEBHOOK_CONFIG_NAME);
            HamiWebhookCoexistence coexistence = new HamiWebhookCoexistence(kubernetes, own, events(), registry);
            background.add(retrying("hami-webhook-check", "HAMi webhook check", () -> {
                coexistence.start();
                return coexistence;
            }, c -> HealthCheck.Result.OK));
        }
    }

    private EventRecorder events() {
        return new EventRecorder(kubernetes, "tenant-gateway-agent", eventHost, clock);
    }

    private HealthCheck.Result webhookReadiness(WebhookServer server) {
        return draining ? HealthCheck.Result.failed("draining")
                : server.isListening() ? HealthCheck.Result.OK : HealthCheck.Result.failed("not listening");
    }

    /** Builds and starts the webhook server (and the CA-bundle manager); the caller owns what is returned. */
    private WebhookParts startWebhookServer(AgentConfig.WebhookPart part, TlsMaterial serving, String servingSource,
            DeviceConfig deviceConfig, KubernetesQuotaLookup quota) {
        WebhookServer.Builder builder = WebhookServer.builder(part.config()).serverTls(serving).registry(registry)
                .clock(clock).vertx(vertx()).deviceConfig(deviceConfig);
        List<AutoCloseable> owned = new ArrayList<>();
        try {
            if (part.upstreamCa().isPresent()) {
                ReloadingTlsMaterial upstreamTrust = ReloadingTlsMaterial.load(
                        TlsFiles.trustOnly(part.upstreamCa().get()), TLS_POLL);
                upstreamTrust.start();
                owned.add(upstreamTrust);
                builder.upstreamTls(upstreamTrust);
            }
            if (quota != null) {
                // A method reference, not the object: passing a KubernetesQuotaLookup where a QuotaLookup is taken
                // makes the verifier load QuotaLookup with Agent, a webhook class a tunnel-only agent must not load.
                builder.quotaLookup(quota::find);
            }
            WebhookServer server = builder.build();
            try {
                server.start();
            } catch (AddressInUseException e) {
                throw new PortInUseException("--webhook-listen", e.address(), e);
            }
            owned.add(server);
            DeviceConfigWatch watch = deviceConfigWatch;
            if (watch != null) {
                watch.subscribe(server::updateDeviceConfig); // the current config now, every change after
            }
            config.webhookConfiguration().ifPresent(managed -> {
                TlsMaterial ca = serving;
                String caSource = servingSource;
                if (managed.caBundle().isPresent()) {
                    ReloadingTlsMaterial caFile = ReloadingTlsMaterial.load(
                            TlsFiles.trustOnly(managed.caBundle().get()), TLS_POLL);
                    caFile.start();
                    owned.add(caFile);
                    ca = caFile;
                    caSource = managed.caBundle().get().toString();
                }
                WebhookConfigurationManager manager = new WebhookConfigurationManager(kubernetes, managed.name(), ca,
                        caSource);
                manager.start();
                owned.add(manager);
                webhookConfigManager = manager;
            });
            webhook = server;
            return new WebhookParts(server, owned);
        } catch (RuntimeException e) {
            closeInReverse(owned);
            throw e;
        }
    }

    /** The webhook server and what it uses (upstream trust, CA-bundle manager); closes them in reverse. */
    private record WebhookParts(WebhookServer server, List<AutoCloseable> owned) implements AutoCloseable {
        @Override
        public void close() {
            closeInReverse(owned);
        }
    }

    private static void closeInReverse(List<AutoCloseable> parts) {
        for (int i = parts.size() - 1; i >= 0; i--) {
            closeQuietly(parts.get(i));
        }
    }

    /** Closes {@code part}; a failure is logged, never thrown: shutdown goes on with the next part. */
    private static void closeQuietly(AutoCloseable part) {
        try {
            part.close();
        } catch (Exception e) {
            log.warn("closing {} failed: {}", part.getClass().getSimpleName(), e.toString());
        }
    }

    private String parts() {
        return "tunnel" + (config.webhook().isPresent() ? ",webhook" : "") + (devices != null ? ",devices" : "")
                + (devicePlugin != null ? ",device-plugin" : "") + (allocation != null ? ",lock-controller" : "");
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
            if (partsScheduler != null) {
                partsScheduler.shutdownNow(); // interrupts a start attempt waiting on the API
            }
            closeStarted();
        }
        log.info("tenant-gateway stopped");
    }

    private void closeStarted() {
        while (!started.isEmpty()) {
            closeQuietly(started.pop());
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

    public Optional<DevicePlugin> devicePlugin() {
        return Optional.ofNullable(devicePlugin);
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
