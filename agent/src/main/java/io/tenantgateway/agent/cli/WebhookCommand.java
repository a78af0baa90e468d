package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.PortInUseException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.webhook.DeviceConfigWatch;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.webhook.KubernetesQuotaLookup;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.HamiCompat;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
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

    @Option(names = "--listen", defaultValue = "0.0.0.0:9443", paramLabel = "HOST:PORT",
            description = "Address to serve HTTPS on. Default: ${DEFAULT-VALUE}.")
    String listen;

    @Option(names = "--max-connections", defaultValue = "1024", paramLabel = "N",
            description = "Connections served at once; more are closed as they arrive (requests must arrive in full"
                    + " within 10s, idle connections close after 60s). Default: ${DEFAULT-VALUE}.")
    int maxConnections;

    @Option(names = "--tls-cert", required = true, paramLabel = "FILE",
            description = "Serving certificate (PEM, chain allowed); reloaded when it changes.")
    Path tlsCert;

    @Option(names = "--tls-key", required = true, paramLabel = "FILE", description = "Serving private key (PEM).")
    Path tlsKey;

    @Option(names = "--client-ca", paramLabel = "FILE",
            description = "Require callers (kube-apiserver) to present a client certificate signed by this CA.")
    Path clientCa;

    @Option(names = "--device-config", paramLabel = "FILE",
            description = "HAMi's device-config.yaml (key of ConfigMap hami-scheduler-device), or that ConfigMap."
                    + " Default: HAMi's defaults.")
    Path deviceConfig;

    @Option(names = "--kubeconfig", paramLabel = "FILE",
            description = "Kubernetes API access (default: in-cluster when run in a pod; none otherwise): enables the"
                    + " ResourceQuota check and the --device-config-map watch.")
    Path kubeconfig;

    @Option(names = "--device-config-map", defaultValue = "kube-system/hami-scheduler-device",
            paramLabel = "NAMESPACE/NAME",
            description = "With API access: HAMi's device ConfigMap, watched; changes apply live. --device-config"
                    + " wins; \"\" turns the watch off. Default: ${DEFAULT-VALUE}.")
    String deviceConfigMap;

    @Option(names = "--scheduler-name", defaultValue = PolicyConfig.DEFAULT_SCHEDULER_NAME,
            description = "Scheduler set on pods that ask for GPUs. Default: ${DEFAULT-VALUE}.")
    String schedulerName;

    @Option(names = "--force-overwrite-default-scheduler", negatable = true, defaultValue = "true",
            fallbackValue = "true",
            description = "Take over pods that name default-scheduler (HAMi's default: on). --no-... keeps them.")
    boolean forceOverwriteDefaultScheduler;

    @Option(names = "--hami-compat", defaultValue = "v2.10", paramLabel = "VERSION",
            description = "HAMi release to reproduce: v2.10 (default) or v2.9.")
    String hamiCompat;

    @Option(names = "--upstream", paramLabel = "URL",
            description = "Forward admissions to this HTTPS webhook, e.g."
                    + " https://hami-scheduler.kube-system.svc:443/webhook.")
    String upstream;

    @Option(names = "--upstream-ca", paramLabel = "FILE", description = "CA that signs the upstream's certificate.")
    Path upstreamCa;

    @Option(names = "--upstream-path", defaultValue = UpstreamConfig.DEFAULT_PATH, paramLabel = "PATH",
            description = "Our path whose requests go upstream; another path than /webhook keeps /webhook on the"
                    + " built-in mutator. Default: ${DEFAULT-VALUE}.")
    String upstreamPath;

    @Option(names = "--upstream-timeout", defaultValue = "9s",
            description = "Deadline for the upstream (below the API server's 10s). Default: ${DEFAULT-VALUE}.")
    String upstreamTimeout;

    @Option(names = "--upstream-failure-policy", defaultValue = "fail-closed", paramLabel = "POLICY",
            description = "When the upstream fails: fail-closed (reject, 503), fail-open (admit with a warning) or"
                    + " fallback (built-in mutator). Default: ${DEFAULT-VALUE}.")
    String upstreamFailurePolicy;

    /** The service-account token a pod gets; with {@code KUBERNETES_SERVICE_HOST} it means in-cluster access. */
    static final Path IN_CLUSTER_TOKEN = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

    private final CountDownLatch stopRequested = new CountDownLatch(1);
    private final CompletableFuture<WebhookServer> started = new CompletableFuture<>();
    private final List<AutoCloseable> resources = new ArrayList<>();

    @Override
    public Integer call() {
        WebhookConfig config = config();
        DeviceConfig devices = deviceConfig == null ? DeviceConfig.defaults()
                : DeviceConfig.load(existing("--device-config", deviceConfig));
        try {
            ReloadingTlsMaterial serverTls = ReloadingTlsMaterial.load(clientCa == null
                    ? TlsFiles.identity(existing("--tls-cert", tlsCert), existing("--tls-key", tlsKey))
                    : TlsFiles.identityAndTrust(existing("--tls-cert", tlsCert), existing("--tls-key", tlsKey),
                            existing("--client-ca", clientCa)), TLS_POLL);
            resources.add(serverTls);
            PrometheusRegistry registry = new PrometheusRegistry();
            WebhookServer.Builder builder = WebhookServer.builder(config).serverTls(serverTls).deviceConfig(devices)
                    .registry(registry);
            List<Runnable> background = kubernetesParts(builder, registry);
            if (config.upstream().isPresent()) {
                ReloadingTlsMaterial upstreamTls = ReloadingTlsMaterial.load(
                        TlsFiles.trustOnly(existing("--upstream-ca", upstreamCa)), TLS_POLL);
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
            throw new PortInUseException("--listen", e.address(), e);
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

    WebhookConfig config() {
        HostPort address = HostPort.parse(listen);
        PolicyConfig policy = new PolicyConfig(schedulerName, forceOverwriteDefaultScheduler,
                HamiCompat.parse(hamiCompat));
        if (maxConnections < 1) {
            throw new UserException("--max-connections: " + maxConnections + " (expected: >= 1)");
        }
        WebhookConfig.Builder config = WebhookConfig.builder().host(address.host()).port(address.port())
                .limits(io.tenantgateway.certs.vertx.ServerLimits.DEFAULTS.withMaxConnections(maxConnections))
                .policy(policy).clientAuth(clientCa == null ? ClientAuthMode.NONE : ClientAuthMode.REQUIRE);
        if (upstream != null) {
            if (upstreamCa == null) {
                throw new UserException("--upstream-ca: missing (expected: the CA file that signs the certificate"
                        + " of " + upstream + ")");
            }
            URI url;
            try {
                url = new URI(upstream);
            } catch (URISyntaxException e) {
                throw new UserException("--upstream: '" + upstream + "' is not a URL (" + e.getReason() + ")", e);
            }
            config.upstream(new UpstreamConfig(url, upstreamPath, Durations.parse("--upstream-timeout",
                    upstreamTimeout), FailurePolicy.parse(upstreamFailurePolicy)));
        } else if (upstreamCa != null) {
            throw new UserException("--upstream-ca: given without --upstream (expected: both or neither)");
        }
        return config.build();
    }

    private void printStarted(WebhookServer server) {
        WebhookConfig config = server.config();
        PrintWriter out = spec.commandLine().getOut();
        out.println("webhook listening on https://" + HostPort.format(config.host(), server.port()) + config.path()
                + " (HAMi " + config.policy().compat() + ", scheduler " + config.policy().schedulerName()
                + (clientCa == null ? "" : ", client certificates required") + ")");
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
    private List<Runnable> kubernetesParts(WebhookServer.Builder builder, PrometheusRegistry registry) {
        boolean inCluster = System.getenv("KUBERNETES_SERVICE_HOST") != null && Files.isReadable(IN_CLUSTER_TOKEN);
        if (kubeconfig == null && !inCluster) {
            return List.of();
        }
        String watched = deviceConfig != null || deviceConfigMap == null || deviceConfigMap.isBlank() ? null
                : deviceConfigMap.strip();
        if (watched != null) {
            DeviceConfigWatch.splitName(watched); // a bad value is a usage error before anything starts
        }
        KubernetesClient client = KubernetesClients.create(kubeconfig == null ? null
                : existing("--kubeconfig", kubeconfig));
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

    private static Path existing(String option, Path file) {
        if (!Files.isRegularFile(file)) {
            throw new UserException(option + ": " + file + (Files.exists(file) ? " is not a regular file"
                    : " does not exist") + " (expected: a readable file)");
        }
        return file;
    }

    /** {@code HOST:PORT}, {@code [v6]:PORT} or {@code :PORT} (all IPv4 interfaces). */
    record HostPort(String host, int port) {
        static HostPort parse(String text) {
            String value = text == null ? "" : text.trim();
            int colon = value.lastIndexOf(':');
            if (colon < 0) {
                throw invalid(text);
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            } else if (host.contains(":")) {
                throw invalid(text);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw invalid(text);
            }
            if (port < 0 || port > 65535) {
                throw new UserException("--listen: port " + port + " (expected: 0..65535)");
            }
            return new HostPort(host.isEmpty() ? "0.0.0.0" : host, port);
        }

        static String format(String host, int port) {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }

        private static UserException invalid(String text) {
            return new UserException("--listen: '" + text + "' (expected: HOST:PORT such as 0.0.0.0:9443 or"
                    + " [::]:9443)");
        }
    }
}
