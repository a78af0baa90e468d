package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.net.PortInUseException;
import io.tenantgateway.common.net.AddressInUseException;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HAMi webhook: the admission server with its serving certificate (PEM files, a Secret, or a Secret the agents
 * keep themselves), HAMi's device config (a file, or HAMi's ConfigMap watched live), the ResourceQuota lookup, the
 * check for HAMi's own webhook beside ours, and the CA bundle of the MutatingWebhookConfiguration. With PEM files it
 * listens at once; what needs the API starts in the background. {@code run} and the standalone {@code webhook}
 * command run this same part.
 */
public final class WebhookPart implements Part {
    private static final Logger log = LoggerFactory.getLogger(WebhookPart.class);
    private static final Duration TLS_POLL = Duration.ofSeconds(10);

    /** The part's name: its package, readiness-check prefix and docs. */
    public static final String NAME = "webhook";
    public static final String SERVING_CHECK = "webhook-serving";
    public static final String QUOTA_CHECK = "webhook-quota-synced";
    public static final String CA_BUNDLE_CHECK = "webhook-ca-bundle";
    public static final String CERTIFICATE_CHECK = "webhook-certificate";
    public static final String DEVICE_CONFIG_CHECK = "webhook-device-config";

    private final WebhookSettings config;
    private final Optional<ManagedWebhookConfiguration> managed;
    private volatile WebhookServer server;
    private volatile WebhookCertificateController certificates;
    private volatile WebhookConfigurationManager configManager;
    private volatile DeviceConfigWatch deviceConfigWatch;
    private volatile ClusterDeviceStateWatch clusterDeviceState;
    private PartContext context;

    public WebhookPart(WebhookSettings config, Optional<ManagedWebhookConfiguration> managed) {
        this.config = requireNonNull(config, "config");
        this.managed = requireNonNull(managed, "managed");
    }

    @Override
    public Plan plan() {
        Plan plan = Plan.of(NAME).check(SERVING_CHECK)
                // The quota lookup, the check for HAMi's own webhook and the Node capacities (cluster device state)
                // run whenever the agent has an API client.
                .withApi(QUOTA_CHECK, Use.WEBHOOK_QUOTA, Use.HAMI_WEBHOOK_CHECK, Use.WEBHOOK_CLUSTER_DEVICE_STATE);
        if (managed.isPresent()) {
            plan = plan.check(CA_BUNDLE_CHECK).uses(Use.MANAGED_WEBHOOK_CONFIG);
        }
        if (config.certificates().isPresent()) {
            plan = plan.check(CERTIFICATE_CHECK).uses(Use.WEBHOOK_TLS_SELF_MANAGED);
        }
        if (config.deviceConfigMap().isPresent()) {
            plan = plan.check(DEVICE_CONFIG_CHECK).uses(Use.DEVICE_CONFIG_MAP);
        }
        return config.tlsSecret().isPresent() ? plan.uses(Use.WEBHOOK_TLS_SECRET) : plan;
    }

    /**
     * With PEM files the webhook listens at once (quota lookup and CA-bundle management follow in the background);
     * with {@code --webhook-tls-secret} it cannot serve before the Secret is read, so listening starts in the
     * background too.
     */
    @Override
    public void start(PartContext context) {
        this.context = context;
        KubernetesQuotaLookup quota = context.hasApi() ? new KubernetesQuotaLookup(context.kubernetes()) : null;
        if (quota == null) {
            log.info("webhook quota check off: no Kubernetes access configured (ResourceQuota limits.nvidia.com/*"
                    + " are not enforced at admission; the scheduler still enforces them)");
        } else {
            context.inBackground(QUOTA_CHECK, "webhook quota lookup", () -> {
                quota.start();
                return quota;
            }, q -> q.synced() ? HealthCheck.Result.OK : HealthCheck.Result.failed("ResourceQuota informer not"
                    + " synced"));
        }
        managed.ifPresent(m -> context.bind(new HealthCheck(CA_BUNDLE_CHECK, () -> {
            WebhookConfigurationManager manager = configManager;
            if (manager == null) {
                return HealthCheck.Result.failed("webhook not started yet");
            }
            String error = manager.lastError();
            return error != null ? HealthCheck.Result.failed("MutatingWebhookConfiguration " + m.name() + ": " + error)
                    : manager.synced() ? HealthCheck.Result.OK
                    : HealthCheck.Result.failed("MutatingWebhookConfiguration " + m.name() + " not synced yet");
        })));
        DeviceConfig deviceConfig = config.deviceConfig().map(DeviceConfig::load).orElse(DeviceConfig.defaults());
        startDeviceConfigSources();
        startClusterDeviceState(deviceConfig);
        if (config.config().clientAuth() != ClientAuthMode.NONE) {
            log.info("webhook requires client certificates from {}", config.clientCa().orElseThrow());
        }
        if (config.certificates().isPresent()) {
            startSelfManaged(deviceConfig, quota);
        } else if (config.tlsSecret().isPresent()) {
            SecretTlsMaterial secret = new SecretTlsMaterial(context.kubernetes(), config.tlsSecret().get());
            context.own(secret);
            String source = "Secret " + config.tlsSecret().get();
            context.inBackground(SERVING_CHECK, "webhook (TLS from " + source + ")", () -> {
                secret.start();
                try {
                    return startServer(secret, source, deviceConfig, quota);
                } catch (RuntimeException e) {
                    secret.close();
                    throw e;
                }
            }, owned -> readiness(owned.server()));
        } else {
            Path cert = config.tlsCert().orElseThrow();
            ReloadingTlsMaterial files = ReloadingTlsMaterial.load(config.clientCa().isPresent()
                    ? TlsFiles.identityAndTrust(cert, config.tlsKey().orElseThrow(), config.clientCa().get())
                    : TlsFiles.identity(cert, config.tlsKey().orElseThrow()), TLS_POLL);
            files.start();
            context.own(files);
            Owned owned = startServer(files, cert.toString(), deviceConfig, quota);
            context.own(owned);
            context.bind(new HealthCheck(SERVING_CHECK, () -> readiness(owned.server())));
        }
    }

    /**
     * {@code --webhook-tls-self-managed}: the webhook listens (in the background, like with a Secret) once the
     * certificate controller serves a certificate, read from the Secret or created there; each attempt builds a new
     * controller (a failed start leaves one closed).
     */
    private void startSelfManaged(DeviceConfig deviceConfig, KubernetesQuotaLookup quota) {
        var settings = config.certificates().orElseThrow();
        context.bind(new HealthCheck(CERTIFICATE_CHECK, () -> {
            WebhookCertificateController current = certificates;
            return current == null ? HealthCheck.Result.failed("not started yet") : current.readiness();
        }));
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).filter(h -> !h.isBlank())
                .orElse(context.node().name().orElse("tenant-gateway"));
        String source = "self-managed Secret " + settings.secret();
        context.inBackground(SERVING_CHECK, "webhook (TLS from " + source + ")", () -> {
            WebhookCertificateController attempt = new WebhookCertificateController(context.kubernetes(), settings,
                    context.registry(), context.clock(), host, context.eventCorrelator());
            certificates = attempt;
            attempt.start();
            try {
                Owned started = startServer(attempt, source, deviceConfig, quota);
                List<AutoCloseable> owned = new ArrayList<>();
                owned.add(attempt); // closed last, after the server
                owned.addAll(started.resources());
                return new Owned(started.server(), owned);
            } catch (RuntimeException e) {
                attempt.close();
                throw e;
            }
        }, owned -> readiness(owned.server()));
    }

    /**
     * Where the device config comes from (the file wins; else HAMi's ConfigMap, watched in the background) and, with
     * API access, the check for HAMi's own webhook next to ours (no readiness check: it warns, it does not stop
     * serving).
     */
    private void startDeviceConfigSources() {
        if (config.deviceConfig().isPresent()) {
            log.info("webhook device config from {} (--device-config wins: HAMi's ConfigMap is not watched)",
                    config.deviceConfig().get());
        } else if (config.deviceConfigMap().isPresent()) {
            DeviceConfigWatch watch = new DeviceConfigWatch(context.kubernetes(), config.deviceConfigMap().get(),
                    context.events(), context.registry());
            deviceConfigWatch = watch;
            context.inBackground(DEVICE_CONFIG_CHECK, "webhook device config (ConfigMap " + watch.configMap() + ")",
                    () -> {
                        watch.start();
                        return watch;
                    }, w -> {
                        DeviceConfigWatch.Readiness readiness = w.readiness();
                        return new HealthCheck.Result(readiness.ready(), readiness.detail());
                    });
        } else {
            log.info("webhook device config: HAMi's defaults (no --device-config, --device-config-map=\"\")");
        }
        if (context.hasApi()) {
            String own = managed.map(ManagedWebhookConfiguration::name)
                    .orElse(WebhookFlags.DEFAULT_WEBHOOK_CONFIG_NAME);
            HamiWebhookCoexistence coexistence = new HamiWebhookCoexistence(context.kubernetes(), own,
                    context.events(), context.registry());
            context.inBackground("hami-webhook-check", "HAMi webhook check", () -> {
                coexistence.start();
                return coexistence;
            }, c -> HealthCheck.Result.OK);
        }
    }

    /**
     * With API access: the scheduler-side state the AWS Neuron and Enflame backends read, learnt from Node capacities
     * in the background (no readiness check: HAMi's defaults apply until the first list). Without: the defaults.
     */
    private void startClusterDeviceState(DeviceConfig deviceConfig) {
        if (!context.hasApi()) {
            log.info("webhook cluster device state: HAMi's defaults (AWS Neuron cores per device 2, Enflame v2.9"
                    + " shared-GCU factor 0): no Kubernetes access to read Node capacities");
            return;
        }
        ClusterDeviceStateWatch watch = new ClusterDeviceStateWatch(context.kubernetes(), deviceConfig,
                context.registry());
        clusterDeviceState = watch;
        context.own(watch); // also when it never starts (closing twice is harmless)
        DeviceConfigWatch devices = deviceConfigWatch;
        if (devices != null) {
            devices.subscribe(watch::deviceConfig); // the Neuron names follow HAMi's ConfigMap
        }
        context.inBackground("webhook-cluster-device-state", "webhook cluster device state (Node capacities)", () -> {
            watch.start();
            return watch;
        }, w -> HealthCheck.Result.OK);
    }

    private HealthCheck.Result readiness(WebhookServer current) {
        return context.draining() ? HealthCheck.Result.failed("draining")
                : current.isListening() ? HealthCheck.Result.OK : HealthCheck.Result.failed("not listening");
    }

    /** Builds and starts the server (and the CA-bundle manager); the caller owns what is returned. */
    private Owned startServer(TlsMaterial serving, String servingSource, DeviceConfig deviceConfig,
            KubernetesQuotaLookup quota) {
        WebhookServer.Builder builder = WebhookServer.builder(config.config()).serverTls(serving)
                .registry(context.registry()).clock(context.clock()).vertx(context.vertx()).deviceConfig(deviceConfig);
        List<AutoCloseable> owned = new ArrayList<>();
        try {
            if (config.upstreamCa().isPresent()) {
                ReloadingTlsMaterial upstreamTrust = ReloadingTlsMaterial.load(
                        TlsFiles.trustOnly(config.upstreamCa().get()), TLS_POLL);
                upstreamTrust.start();
                owned.add(upstreamTrust);
                builder.upstreamTls(upstreamTrust);
            }
            if (quota != null) {
                builder.quotaLookup(quota::find);
            }
            WebhookServer created = builder.build();
            try {
                created.start();
            } catch (AddressInUseException e) {
                throw new PortInUseException("--webhook-listen", e.address(), e);
            }
            owned.add(created);
            DeviceConfigWatch watch = deviceConfigWatch;
            if (watch != null) {
                watch.subscribe(created::updateDeviceConfig); // the current config now, every change after
            }
            ClusterDeviceStateWatch state = clusterDeviceState;
            if (state != null) {
                state.subscribe(created::updateClusterState); // likewise for the state learnt from Nodes
            }
            managed.ifPresent(m -> {
                TlsMaterial ca = serving;
                String caSource = servingSource;
                if (m.caBundle().isPresent()) {
                    ReloadingTlsMaterial caFile = ReloadingTlsMaterial.load(TlsFiles.trustOnly(m.caBundle().get()),
                            TLS_POLL);
                    caFile.start();
                    owned.add(caFile);
                    ca = caFile;
                    caSource = m.caBundle().get().toString();
                }
                WebhookConfigurationManager manager = new WebhookConfigurationManager(context.kubernetes(), m.name(),
                        ca, caSource);
                manager.start();
                owned.add(manager);
                configManager = manager;
            });
            server = created;
            return new Owned(created, owned);
        } catch (RuntimeException e) {
            new Owned(null, owned).close();
            throw e;
        }
    }

    /** The webhook server and what it uses (upstream trust, CA-bundle manager); closes them in reverse. */
    private record Owned(WebhookServer server, List<AutoCloseable> resources) implements AutoCloseable {
        @Override
        public void close() {
            for (int i = resources.size() - 1; i >= 0; i--) {
                try {
                    resources.get(i).close();
                } catch (Exception e) {
                    log.warn("closing {} failed: {}", resources.get(i).getClass().getSimpleName(), e.toString());
                }
            }
        }
    }

    /** The server, once listening. */
    public Optional<WebhookServer> server() {
        return Optional.ofNullable(server);
    }

    /** The self-managed certificate controller, once started ({@code --webhook-tls-self-managed}). */
    public Optional<WebhookCertificateController> certificates() {
        return Optional.ofNullable(certificates);
    }

}
