package io.tenantgateway.agent.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.k8s.DeviceConfigWatch;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.k8s.KubernetesQuotaLookup;
import io.tenantgateway.agent.webhook.WebhookFlags;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.ConfigFiles;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tenant-gateway webhook}: the HAMi-compatible mutating webhook (and optional upstream proxy) on its own, for
 * operators and black-box tests. Runs until SIGTERM/SIGINT. With API access ({@code --kubeconfig}, or in a pod) it
 * checks ResourceQuotas as {@code run} does and follows HAMi's device ConfigMap; both start in the background and
 * retry, so the webhook serves at once (without the quota check and with HAMi's defaults until they are read).
 * Without API access the quota check is off.
 */
@Command(name = "webhook", mixinStandardHelpOptions = true,
        description = "Serve the HAMi-compatible mutating webhook (and optional upstream proxy) standalone.")
public final class WebhookCommand implements Callable<Integer> {
    /** How often the TLS files are re-read when the file watcher misses a change. */
    static final Duration TLS_POLL = Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    /**
     * {@code run}'s webhook flags ({@code --webhook-listen}, {@code --webhook-tls-cert}, {@code --webhook-tls-secret},
     * {@code --device-config}, {@code --upstream}, ...).
     */
    @Mixin
    WebhookFlags webhook;

    /** This command's own names for five of them, from before it took {@code run}'s; hidden, still accepted. */
    @Mixin
    StandaloneNames standaloneNames;

    @Option(names = "--kubeconfig", paramLabel = "FILE",
            description = "Kubernetes API access (default: in-cluster when run in a pod; none otherwise): enables the"
                    + " ResourceQuota check and the --device-config-map watch.")
    Path kubeconfig;

    @Option(names = "--upstream-path", defaultValue = UpstreamConfig.DEFAULT_PATH, paramLabel = "PATH",
            description = "Our path whose requests go upstream; another path than /webhook keeps /webhook on the"
                    + " built-in mutator. Default: ${DEFAULT-VALUE}.")
    String upstreamPath;

    /**
     * What the webhook flags describe, checked: {@code AgentConfig.WebhookPart}'s components but the self-managed
     * certificates (this package can use neither that record nor {@code WebhookCertificatesConfig}: both would close
     * a package cycle).
     */
    record Webhook(WebhookConfig config, Optional<Path> tlsCert, Optional<Path> tlsKey, Optional<String> tlsSecret,
            Optional<Path> clientCa, Optional<Path> deviceConfig, Optional<Path> upstreamCa,
            Optional<String> deviceConfigMap) {
    }

    /** {@code --listen} and the others: the names {@link WebhookFlags} knows as {@code --webhook-listen} and so on. */
    static final class StandaloneNames {
        @Option(names = "--listen", hidden = true, paramLabel = "HOST:PORT",
                description = "--webhook-listen. Default: 0.0.0.0:9443.")
        String listen;

        @Option(names = "--max-connections", hidden = true, paramLabel = "N",
                description = "--webhook-max-connections. Default: 1024.")
        Integer maxConnections;

        @Option(names = "--tls-cert", hidden = true, paramLabel = "FILE", description = "--webhook-tls-cert.")
        Path tlsCert;

        @Option(names = "--tls-key", hidden = true, paramLabel = "FILE", description = "--webhook-tls-key.")
        Path tlsKey;

        @Option(names = "--client-ca", hidden = true, paramLabel = "FILE", description = "--webhook-client-ca.")
        Path clientCa;

        @Option(names = "--no-force-overwrite-default-scheduler", hidden = true,
                description = "--force-overwrite-default-scheduler=false.")
        boolean noForceOverwriteDefaultScheduler;

        WebhookFlags.StandaloneNames values() {
            return new WebhookFlags.StandaloneNames(listen, maxConnections, tlsCert, tlsKey, clientCa,
                    noForceOverwriteDefaultScheduler);
        }
    }

    /** The service-account token a pod gets; with {@code KUBERNETES_SERVICE_HOST} it means in-cluster access. */
    static final Path IN_CLUSTER_TOKEN = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

    private final CountDownLatch stopRequested = new CountDownLatch(1);
    private final CompletableFuture<WebhookServer> started = new CompletableFuture<>();
    private final List<AutoCloseable> resources = new ArrayList<>();
    /** {@code --manage-webhook-config}'s configuration name, when given (not served by this command yet). */
    private Optional<String> managedConfiguration = Optional.empty();

    @Override
    public Integer call() {
        Webhook part = config();
        if (part.tlsSecret().isPresent() || managedConfiguration.isPresent()) {
            // Until this command runs the agent's webhook part: files only.
            throw new ConfigException(part.tlsSecret().isPresent() ? "--webhook-tls-secret" : "--manage-webhook-config",
                    part.tlsSecret().orElse("true"), "--tls-cert and --tls-key files: tenant-gateway webhook does"
                            + " not read Secrets or manage the webhook configuration yet; tenant-gateway run does");
        }
        WebhookConfig config = part.config();
        Path clientCa = part.clientCa().orElse(null);
        DeviceConfig devices = part.deviceConfig().map(DeviceConfig::load).orElseGet(DeviceConfig::defaults);
        try {
            Path tlsCert = part.tlsCert().orElseThrow();
            Path tlsKey = part.tlsKey().orElseThrow();
            ReloadingTlsMaterial serverTls = ReloadingTlsMaterial.load(clientCa == null
                    ? TlsFiles.identity(tlsCert, tlsKey) : TlsFiles.identityAndTrust(tlsCert, tlsKey, clientCa),
                    TLS_POLL);
            resources.add(serverTls);
            PrometheusRegistry registry = new PrometheusRegistry();
            WebhookServer.Builder builder = WebhookServer.builder(config).serverTls(serverTls).deviceConfig(devices)
                    .registry(registry);
            List<Runnable> background = kubernetesParts(builder, registry, part.deviceConfigMap().orElse(null));
            if (config.upstream().isPresent()) {
                ReloadingTlsMaterial upstreamTls = ReloadingTlsMaterial.load(
                        TlsFiles.trustOnly(part.upstreamCa().orElseThrow()), TLS_POLL);
                resources.add(upstreamTls);
                builder.upstreamTls(upstreamTls);
                upstreamTls.start();
            }
            serverTls.start();
            WebhookServer server = builder.build();
            resources.add(server);
            server.start();
            printStarted(server);
            background.forEach(Runnable::run);
            started.complete(server);
        } catch (AddressInUseException e) {
            started.completeExceptionally(e);
            close();
            throw new PortInUseException(standaloneNames.listen != null ? "--listen" : "--webhook-listen",
                    e.address(), e);
        } catch (RuntimeException e) {
            started.completeExceptionally(e);
            close();
            throw e;
        }
        Thread shutdownHook = new Thread(this::stop, "tenant-gateway-webhook-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            stopRequested.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close();
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // The JVM is already shutting down and runs the hook itself; nothing left to undo.
            }
        }
        return ExitCodes.OK;
    }

    /**
     * The flags, checked: the webhook's part as {@code run} would serve it, upstream requests on
     * {@code --upstream-path}; {@code --manage-webhook-config} is checked too, into {@link #managedConfiguration}.
     */
    Webhook config() {
        webhook.use(standaloneNames.values());
        Webhook part = webhook.serving(upstreamPath, (secret, service, validity, renewBefore, caValidity, overlap) -> {
            throw new ConfigException("--webhook-tls-self-managed", "true", "false: tenant-gateway webhook does not"
                    + " manage certificates yet; tenant-gateway run does");
        }, (config, tlsCert, tlsKey, tlsSecret, clientCa, deviceConfig, upstreamCa, deviceConfigMap, certificates) ->
                new Webhook(config, tlsCert, tlsKey, tlsSecret, clientCa, deviceConfig, upstreamCa, deviceConfigMap));
        managedConfiguration = webhook.managedConfiguration((name, caBundle) -> name);
        ConfigFiles.optional("--kubeconfig", kubeconfig);
        return part;
    }

    private void printStarted(WebhookServer server) {
        WebhookConfig config = server.config();
        PrintWriter out = spec.commandLine().getOut();
        out.println("webhook listening on https://" + HostPort.format(config.host(), server.port()) + config.path()
                + " (HAMi " + config.policy().compat() + ", scheduler " + config.policy().schedulerName()
                + (config.clientAuth() == ClientAuthMode.NONE ? "" : ", client certificates required") + ")");
        config.upstream().ifPresent(u -> out.println("upstream: " + u.path() + " -> " + u.url() + " (timeout "
                + Durations.format(u.timeout()) + ", " + u.failurePolicy() + ")"));
        if (!server.quotaCheckEnabled()) {
            out.println("quota check: off (no --kubeconfig and not in a pod: no ResourceQuota lookup)");
        }
        out.flush();
    }

    /**
     * With API access: the ResourceQuota lookup (plugged into {@code builder}) and, unless {@code --device-config}
     * is given, the device ConfigMap watch. Returns what starts them in the background once the server listens.
     */
    private List<Runnable> kubernetesParts(WebhookServer.Builder builder, PrometheusRegistry registry,
            String watched) {
        boolean inCluster = System.getenv("KUBERNETES_SERVICE_HOST") != null && Files.isReadable(IN_CLUSTER_TOKEN);
        if (kubeconfig == null && !inCluster) {
            return List.of();
        }
        KubernetesClient client = KubernetesClients.create(kubeconfig);
        resources.add(client);
        String api = client.getConfiguration().getMasterUrl();
        ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(
                DaemonThreads.named("webhook-api-parts"));
        resources.add(retries::shutdownNow);
        KubernetesQuotaLookup quota = new KubernetesQuotaLookup(client);
        resources.add(quota);
        builder.quotaLookup(quota);
        List<Runnable> parts = new ArrayList<>();
        parts.add(() -> retrying(retries, client, "quota check", quota::start,
                "quota check: on (ResourceQuotas from " + api + ")"));
        if (watched != null) {
            DeviceConfigWatch watch = new DeviceConfigWatch(client, watched, new EventRecorder(client,
                    "tenant-gateway-webhook", hostName(), Clock.systemUTC()), registry);
            resources.add(watch);
            parts.add(() -> {
                started.thenAccept(server -> watch.subscribe(server::updateDeviceConfig));
                retrying(retries, client, "device config watch", watch::start,
                        "device config: ConfigMap " + watched + " (changes apply live)");
            });
        }
        return parts;
    }

    /** Runs {@code start} on {@code retries} until it succeeds, with the agent's backoff; says what happens. */
    private void retrying(ScheduledExecutorService retries, KubernetesClient client, String what, Runnable start,
            String done) {
        Backoff.Execution backoff = Backoff.agentSync(Duration.ofSeconds(1), Duration.ofSeconds(30))
                .start(new java.util.Random());
        Runnable attempt = new Runnable() {
            private String lastFailure;

            @Override
            public void run() {
                try {
                    start.run();
                    spec.commandLine().getOut().println(done);
                    spec.commandLine().getOut().flush();
                } catch (RuntimeException e) {
                    String reason = KubernetesClients.describeFailure(client, e);
                    Duration wait = backoff.failure();
                    if (!reason.equals(lastFailure)) {
                        spec.commandLine().getErr().println("warning: " + what + " not started: " + reason
                                + "; retrying (the webhook serves meanwhile)");
                        spec.commandLine().getErr().flush();
                    }
                    lastFailure = reason;
                    try {
                        retries.schedule(this, wait.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.RejectedExecutionException closing) {
                        // stopping
                    }
                }
            }
        };
        retries.execute(attempt);
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "tenant-gateway-webhook";
        }
    }

    /** Asks a running {@link #call()} to close the server and return (the shutdown hook does the same). */
    void stop() {
        stopRequested.countDown();
        close();
    }

    /** Completes once the server listens (tests read the bound port from it). */
    CompletableFuture<WebhookServer> started() {
        return started;
    }

    private synchronized void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                spec.commandLine().getErr().println("warning: closing " + resources.get(i).getClass().getSimpleName()
                        + " failed: " + e.getMessage());
            }
        }
        resources.clear();
    }
}
