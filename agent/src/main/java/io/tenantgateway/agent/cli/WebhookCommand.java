package io.tenantgateway.agent.cli;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.part.PartManager;
import io.tenantgateway.agent.webhook.ManagedWebhookConfiguration;
import io.tenantgateway.agent.webhook.WebhookFlags;
import io.tenantgateway.agent.webhook.WebhookPart;
import io.tenantgateway.agent.webhook.WebhookSettings;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.ConfigFiles;
import io.tenantgateway.common.net.PortInUseException;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * operators and black-box tests: {@code run}'s webhook part, run alone, with {@code run}'s webhook flags. Runs until
 * SIGTERM/SIGINT. With API access ({@code --kubeconfig}, or in a pod) it checks ResourceQuotas, follows HAMi's device
 * ConfigMap, reads its certificate from a Secret or keeps one there ({@code --webhook-tls-self-managed}) and keeps the
 * MutatingWebhookConfiguration's CA bundle current, as {@code run} does: what needs the API starts in the background
 * and retries. Without API access the quota check and the ConfigMap watch are off.
 */
@Command(name = "webhook", mixinStandardHelpOptions = true,
        description = "Serve the HAMi-compatible mutating webhook (and optional upstream proxy) standalone.")
public final class WebhookCommand implements Callable<Integer> {
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
            description = "Kubernetes API access: enables the ResourceQuota check and the --device-config-map watch."
                    + " Default: in-cluster when run in a pod, else none.")
    Path kubeconfig;

    @Option(names = "--upstream-path", defaultValue = UpstreamConfig.DEFAULT_PATH, paramLabel = "PATH",
            description = "Our path whose requests go upstream; another path than /webhook keeps /webhook on the"
                    + " built-in mutator. Default: ${DEFAULT-VALUE}.")
    String upstreamPath;

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
    private volatile boolean stopping;
    /** {@code --manage-webhook-config}, when given. */
    private Optional<ManagedWebhookConfiguration> managedConfiguration = Optional.empty();

    @Override
    public Integer call() {
        WebhookSettings settings = config();
        boolean api = kubeconfig != null || inCluster();
        if (!api) {
            if (settings.tlsSecret().isPresent() || managedConfiguration.isPresent()) {
                String flag = settings.tlsSecret().isPresent() ? "--webhook-tls-secret" : "--manage-webhook-config";
                throw new ConfigException(flag, settings.tlsSecret().orElse("true"), "--kubeconfig, or running in a"
                        + " pod: the API is how the webhook reads " + (settings.tlsSecret().isPresent()
                                ? "its Secret" : "its MutatingWebhookConfiguration"));
            }
            // No API: HAMi's defaults (or --device-config), no ConfigMap watch, no quota check.
            settings = new WebhookSettings(settings.config(), settings.tlsCert(), settings.tlsKey(),
                    settings.tlsSecret(), settings.clientCa(), settings.deviceConfig(), settings.upstreamCa(),
                    Optional.empty(), settings.certificates());
        }
        WebhookPart webhook = new WebhookPart(settings, managedConfiguration);
        PartManager manager = new PartManager(List.of(webhook), new PrometheusRegistry(), Clock.systemUTC(),
                NodeIdentity.of(Optional.empty()), "webhook", hostName(), kubeconfig, () -> stopping, api);
        List<HealthCheck> checks = manager.declareChecks();
        ScheduledExecutorService announcer = Executors.newSingleThreadScheduledExecutor(
                DaemonThreads.named("webhook-announcer"));
        try {
            try {
                manager.start(); // with certificate files the server listens now; with a Secret once it is read
            } catch (PortInUseException e) {
                throw listenInUse(e);
            }
            announce(webhook, checks, settings, announcer);
            Thread shutdownHook = new Thread(this::stop, "tenant-gateway-webhook-shutdown");
            Runtime.getRuntime().addShutdownHook(shutdownHook);
            manager.fatalError().thenRun(stopRequested::countDown);
            try {
                stopRequested.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(shutdownHook);
                } catch (IllegalStateException e) {
                    // The JVM is already shutting down and runs the hook itself; nothing left to undo.
                }
            }
            RuntimeException error = manager.fatalError().getNow(null);
            if (error != null) {
                throw error instanceof PortInUseException inUse ? listenInUse(inUse) : error;
            }
            return ExitCodes.OK;
        } catch (RuntimeException e) {
            started.completeExceptionally(e);
            throw e;
        } finally {
            announcer.shutdownNow();
            manager.close();
        }
    }

    /** The port in use, named by the flag it was given as ({@code --listen} or {@code --webhook-listen}). */
    private PortInUseException listenInUse(PortInUseException e) {
        String flag = standaloneNames.listen != null ? "--listen" : "--webhook-listen";
        return e.flag().equals(flag) ? e : new PortInUseException(flag, e.address(), e);
    }

    /**
     * Says on standard output what serves, once it does: the address (then {@link #started()} completes), the
     * upstream, and the quota check and device ConfigMap once they are synced, as each becomes true (the log says why
     * they are not yet, and retries).
     */
    private void announce(WebhookPart webhook, List<HealthCheck> checks, WebhookSettings settings,
            ScheduledExecutorService announcer) {
        Map<String, String> pending = new java.util.LinkedHashMap<>();
        if (settings.deviceConfigMap().isPresent()) {
            pending.put(WebhookPart.DEVICE_CONFIG_CHECK, "device config: ConfigMap " + settings.deviceConfigMap().get()
                    + " (changes apply live)");
        }
        boolean quota = checks.stream().anyMatch(c -> c.name().equals(WebhookPart.QUOTA_CHECK));
        if (quota) {
            pending.put(WebhookPart.QUOTA_CHECK, "quota check: on (ResourceQuotas from " + apiServer() + ")");
        }
        Runnable poll = new Runnable() {
            @Override
            public void run() {
                PrintWriter out = spec.commandLine().getOut();
                Optional<WebhookServer> server = webhook.server();
                if (server.isPresent() && !started.isDone()) {
                    printStarted(server.get(), quota);
                    started.complete(server.get());
                }
                for (HealthCheck check : checks) {
                    String line = pending.get(check.name());
                    if (line != null && check.run().ok()) {
                        out.println(line);
                        out.flush();
                        pending.remove(check.name());
                    }
                }
                if (!started.isDone() || !pending.isEmpty()) {
                    announcer.schedule(this, 50, TimeUnit.MILLISECONDS);
                }
            }
        };
        announcer.execute(poll);
    }

    private String apiServer() {
        return io.tenantgateway.agent.k8s.KubernetesClients.config(kubeconfig).getMasterUrl(); // no client built
    }

    private static boolean inCluster() {
        return System.getenv("KUBERNETES_SERVICE_HOST") != null && Files.isReadable(IN_CLUSTER_TOKEN);
    }

    /**
     * The flags, checked: the webhook's settings as {@code run} would serve them, upstream requests on
     * {@code --upstream-path}; {@code --manage-webhook-config} into {@link #managedConfiguration}.
     */
    WebhookSettings config() {
        webhook.use(standaloneNames.values());
        WebhookSettings settings = webhook.serving(upstreamPath);
        managedConfiguration = webhook.managedConfiguration();
        ConfigFiles.optional("--kubeconfig", kubeconfig);
        return settings;
    }

    private void printStarted(WebhookServer server, boolean quota) {
        WebhookConfig config = server.config();
        PrintWriter out = spec.commandLine().getOut();
        out.println("webhook listening on https://" + HostPort.format(config.host(), server.port()) + config.path()
                + " (HAMi " + config.policy().compat() + ", scheduler " + config.policy().schedulerName()
                + (config.clientAuth() == ClientAuthMode.NONE ? "" : ", client certificates required") + ")");
        config.upstream().ifPresent(u -> out.println("upstream: " + u.path() + " -> " + u.url() + " (timeout "
                + Durations.format(u.timeout()) + ", " + u.failurePolicy() + ")"));
        if (!quota) {
            out.println("quota check: off (no --kubeconfig and not in a pod: no ResourceQuota lookup)");
        }
        out.flush();
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
        stopping = true;
        stopRequested.countDown();
    }

    /** Completes once the server listens (tests read the bound port from it). */
    CompletableFuture<WebhookServer> started() {
        return started;
    }
}
