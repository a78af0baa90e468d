package io.tenantgateway.agent.webhook;

import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.ConfigFiles;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import picocli.CommandLine.Option;

/**
 * The HAMi webhook's flags, shared by {@code run} and {@code tenant-gateway webhook}: where it serves and with which
 * certificate (files, a Secret, or a Secret the agents keep themselves: {@code --webhook-tls-self-managed}), HAMi's
 * policy and device config, the upstream webhook, and the MutatingWebhookConfiguration the agent keeps current. A
 * picocli mixin; {@link #settings} (or {@link #serving} for the standalone command) and
 * {@link #managedConfiguration} are the checked result.
 */
public final class WebhookFlags {
    /** Name of the MutatingWebhookConfiguration in manifests/base. */
    public static final String DEFAULT_WEBHOOK_CONFIG_NAME = "tenant-gateway-hami-webhook";
    /** Where HAMi's chart puts its device configuration. */
    public static final String DEFAULT_DEVICE_CONFIG_MAP = "kube-system/hami-scheduler-device";

    private static final String LISTEN = "--webhook-listen";
    private static final String MAX_CONNECTIONS = "--webhook-max-connections";
    private static final String TLS_CERT = "--webhook-tls-cert";
    private static final String TLS_KEY = "--webhook-tls-key";
    private static final String CLIENT_CA = "--webhook-client-ca";

    @Option(names = "--enable-webhook", arity = "0..1", fallbackValue = "true", order = 3, paramLabel = "true|false",
            description = "Serve the HAMi webhook (tenant-gateway webhook always does). Default: true when"
                    + " --webhook-tls-cert or --webhook-tls-secret is given, else false.")
    Boolean enableWebhook;

    @Option(names = LISTEN, defaultValue = "0.0.0.0:9443", order = 3, paramLabel = "[HOST:]PORT",
            description = "Address of the webhook HTTPS server. Default: ${DEFAULT-VALUE}.")
    String webhookListen;

    @Option(names = MAX_CONNECTIONS, defaultValue = "1024", order = 3, paramLabel = "N",
            description = "Connections the webhook serves at once; more are closed as they arrive (requests must"
                    + " arrive in full within 10s, idle connections close after 60s). Default: ${DEFAULT-VALUE}.")
    int webhookMaxConnections;

    @Option(names = TLS_CERT, order = 3, paramLabel = "FILE", description = "Webhook serving certificate (reloaded on"
            + " change), with --webhook-tls-key; turns the webhook on. Default: none.")
    Path webhookTlsCert;

    @Option(names = TLS_KEY, order = 3, paramLabel = "FILE", description = "Key of --webhook-tls-cert. Default: none.")
    Path webhookTlsKey;

    @Option(names = "--webhook-tls-secret", order = 3, paramLabel = "NAMESPACE/NAME",
            description = "Read tls.crt/tls.key (and ca.crt) from this Secret through the API instead of files"
                    + " (for Kamaji's DaemonSet, which cannot mount volumes); turns the webhook on. Default: none.")
    String webhookTlsSecret;

    @Option(names = CLIENT_CA, order = 3, paramLabel = "FILE",
            description = "Require callers (kube-apiserver) to present a certificate from this CA. Default: none (no"
                    + " client certificate asked for).")
    Path webhookClientCa;

    @Option(names = "--device-config", order = 3, paramLabel = "FILE",
            description = "HAMi's device-config.yaml (ConfigMap hami-scheduler-device) as a file, read at start."
                    + " Default: none (the webhook watches --device-config-map; the other parts use HAMi's"
                    + " defaults).")
    Path deviceConfig;

    @Option(names = "--device-config-map", defaultValue = DEFAULT_DEVICE_CONFIG_MAP, order = 3,
            paramLabel = "NAMESPACE/NAME",
            description = "HAMi's device ConfigMap (key device-config.yaml), watched through the API; changes apply"
                    + " live. --device-config wins; \"\" turns the watch off. Default: ${DEFAULT-VALUE}.")
    String deviceConfigMap;

    @Option(names = "--scheduler-name", defaultValue = PolicyConfig.DEFAULT_SCHEDULER_NAME, order = 3,
            paramLabel = "NAME", description = "Scheduler GPU pods are sent to (\"\": GPU pods keep theirs)."
                    + " Default: ${DEFAULT-VALUE}.")
    String schedulerName;

    @Option(names = "--force-overwrite-default-scheduler", arity = "0..1", defaultValue = "true",
            fallbackValue = "true", order = 3, paramLabel = "true|false",
            description = "Replace schedulerName default-scheduler on GPU pods. Default: ${DEFAULT-VALUE}.")
    boolean forceOverwriteDefaultScheduler;

    @Option(names = "--hami-compat", defaultValue = "v2.10", order = 3, paramLabel = "v2.9|v2.10",
            description = "The HAMi release whose behaviour to match: the webhook's decisions, and how this node's"
                    + " registrations are read on /ui, /debug/devices and in doctor (also without the webhook)."
                    + " Default: ${DEFAULT-VALUE}.")
    String hamiCompat;

    /**
     * {@code --hami-compat}, checked: also what the node views read registrations as, so it is parsed here without
     * the webhook's classes (a tunnel-only agent loads none of them).
     */
    public io.tenantgateway.hami.HamiRelease hamiRelease() {
        return parseHamiCompat(hamiCompat);
    }

    /**
     * A {@code --hami-compat} value, as {@code run}, {@code webhook} and {@code annotations} read it: {@code v2.10},
     * {@code 2.10}, {@code v2.10.0} and the same for v2.9.
     *
     * @throws ConfigException naming the flag, the value and the releases
     */
    public static io.tenantgateway.hami.HamiRelease parseHamiCompat(String text) {
        return io.tenantgateway.hami.HamiRelease.fromText(text).orElseThrow(() -> new ConfigException(
                "--hami-compat", "'" + text + "'", "one of " + io.tenantgateway.hami.HamiRelease.labels()));
    }

    @Option(names = "--enable-ascend", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 3,
            paramLabel = "true|false",
            description = "Run HAMi's Ascend backends (one per vnpus chip of the device config), as HAMi's scheduler"
                    + " flag of that name; off as in HAMi's chart. Default: ${DEFAULT-VALUE}.")
    boolean enableAscend;

    @Option(names = "--enable-iluvatar", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 3,
            paramLabel = "true|false",
            description = "Run HAMi's Iluvatar backends (one per iluvatars chip of the device config), as HAMi's"
                    + " scheduler flag of that name; off as in HAMi's chart. Default: ${DEFAULT-VALUE}.")
    boolean enableIluvatar;

    @Option(names = "--upstream", order = 3, paramLabel = "URL",
            description = "Forward admissions to this HTTPS webhook (e.g. the real hami-scheduler). Default: none.")
    String upstream;

    @Option(names = "--upstream-ca", order = 3, paramLabel = "FILE",
            description = "CA of --upstream (required with it). Default: none.")
    Path upstreamCa;

    @Option(names = "--upstream-timeout", defaultValue = "9s", order = 3, paramLabel = "DURATION",
            description = "Deadline of one whole exchange with --upstream; keep it below kube-apiserver's webhook"
                    + " timeout (10s). Default: ${DEFAULT-VALUE}.")
    String upstreamTimeout;

    @Option(names = "--upstream-failure-policy", defaultValue = "fail-closed", order = 3, paramLabel = "POLICY",
            description = "When --upstream cannot answer: fail-closed (reject the pod, saying why), fail-open (allow"
                    + " it unchanged) or fallback (the built-in HAMi mutator answers). Default: ${DEFAULT-VALUE}.")
    String upstreamFailurePolicy;

    @Option(names = "--manage-webhook-config", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 3, paramLabel = "true|false", description = "Keep the CA bundle of the"
                    + " MutatingWebhookConfiguration up to date. Default: ${DEFAULT-VALUE}.")
    boolean manageWebhookConfig;

    @Option(names = "--webhook-config-name", defaultValue = DEFAULT_WEBHOOK_CONFIG_NAME, order = 3, paramLabel = "NAME",
            description = "MutatingWebhookConfiguration managed with --manage-webhook-config. Default: ${DEFAULT-VALUE}.")
    String webhookConfigName;

    @Option(names = "--webhook-ca-bundle", order = 3, paramLabel = "FILE",
            description = "CA written into the webhook configuration. Default: ca.crt next to --webhook-tls-cert,"
                    + " else the ca.crt of --webhook-tls-secret.")
    Path webhookCaBundle;

    // --- self-managed webhook certificates (WebhookCertificateController) ---

    @Option(names = "--webhook-tls-self-managed", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 3, paramLabel = "true|false", description = "Create a CA and serving certificate in"
                    + " --webhook-tls-secret when it is missing, and renew them before they expire; every agent serves"
                    + " the Secret's certificate. Default: ${DEFAULT-VALUE}.")
    boolean webhookTlsSelfManaged;

    @Option(names = "--webhook-service", defaultValue = WebhookCertificatesConfig.DEFAULT_SERVICE, order = 3,
            paramLabel = "NAMESPACE/NAME", description = "Service kube-apiserver calls the webhook through: the"
                    + " self-managed certificate is for its DNS names. Default: ${DEFAULT-VALUE}.")
    String webhookService;

    @Option(names = "--webhook-tls-validity", defaultValue = WebhookCertificatesConfig.DEFAULT_VALIDITY, order = 3,
            paramLabel = "DURATION",
            description = "Validity of a self-managed serving certificate. Default: ${DEFAULT-VALUE}.")
    String webhookTlsValidity;

    @Option(names = "--webhook-tls-renew-before", defaultValue = WebhookCertificatesConfig.DEFAULT_RENEW_BEFORE,
            order = 3, paramLabel = "DURATION",
            description = "Renew the self-managed serving certificate once less than this is left."
                    + " Default: ${DEFAULT-VALUE}.")
    String webhookTlsRenewBefore;

    @Option(names = "--webhook-ca-validity", defaultValue = WebhookCertificatesConfig.DEFAULT_CA_VALIDITY, order = 3,
            paramLabel = "DURATION",
            description = "Validity of a self-managed CA; it is replaced once less than one --webhook-tls-validity is"
                    + " left. Default: ${DEFAULT-VALUE}.")
    String webhookCaValidity;

    @Option(names = "--webhook-ca-overlap", defaultValue = WebhookCertificatesConfig.DEFAULT_CA_OVERLAP, order = 3,
            hidden = true, paramLabel = "DURATION",
            description = "How long a new self-managed CA is published next to the old one before it"
                    + " signs the served certificate. Default: ${DEFAULT-VALUE}.")
    String webhookCaOverlap;

    /** Flags given under another name ({@link #use(StandaloneNames)}): messages about them name that one. */
    private final Map<String, String> givenAs = new HashMap<>();

    /**
     * {@code tenant-gateway webhook}'s own names for five of these flags, kept from before it took {@code run}'s:
     * {@code --listen}, {@code --max-connections}, {@code --tls-cert}, {@code --tls-key}, {@code --client-ca}
     * ({@code null}: not given), and {@code --no-force-overwrite-default-scheduler}.
     */
    public record StandaloneNames(String listen, Integer maxConnections, Path tlsCert, Path tlsKey, Path clientCa,
            boolean noForceOverwriteDefaultScheduler) {
    }

    /**
     * Takes the values given under {@code tenant-gateway webhook}'s own names: each replaces its flag's, and
     * messages about the flag name the name it was given as (for a file not given under either name, the
     * standalone's name, which its documentation uses).
     */
    public void use(StandaloneNames names) {
        if (names.listen() != null) {
            webhookListen = names.listen();
            givenAs.put(LISTEN, "--listen");
        }
        if (names.maxConnections() != null) {
            webhookMaxConnections = names.maxConnections();
            givenAs.put(MAX_CONNECTIONS, "--max-connections");
        }
        webhookTlsCert = standalone(TLS_CERT, "--tls-cert", names.tlsCert(), webhookTlsCert);
        webhookTlsKey = standalone(TLS_KEY, "--tls-key", names.tlsKey(), webhookTlsKey);
        webhookClientCa = standalone(CLIENT_CA, "--client-ca", names.clientCa(), webhookClientCa);
        if (names.noForceOverwriteDefaultScheduler()) {
            forceOverwriteDefaultScheduler = false;
        }
    }

    private Path standalone(String flag, String name, Path value, Path current) {
        if (value != null || current == null) {
            givenAs.put(flag, name);
        }
        return value != null ? value : current;
    }

    private String flag(String name) {
        return givenAs.getOrDefault(name, name);
    }

    /** Whether {@code run} serves the webhook: {@code --enable-webhook}, else whether a certificate source is given. */
    public boolean enabled() {
        return enableWebhook != null ? enableWebhook : webhookTlsCert != null || webhookTlsSecret != null;
    }

    /** {@code --device-config}, checked to be a file; also what device registration and the device plugin read. */
    public Optional<Path> deviceConfigFile() {
        return Optional.ofNullable(ConfigFiles.optional("--device-config", deviceConfig));
    }

    /** {@code run}'s webhook, checked; empty when it is off. */
    public Optional<WebhookSettings> settings() {
        if (!enabled()) {
            if (webhookTlsSelfManaged) {
                certificates(); // a missing or malformed --webhook-tls-secret is the first thing to fix
                throw new ConfigException("--webhook-tls-self-managed", "true with the webhook off",
                        "--enable-webhook=true, or drop --webhook-tls-self-managed");
            }
            return Optional.empty();
        }
        return Optional.of(build(UpstreamConfig.DEFAULT_PATH,
                () -> new ConfigException("--enable-webhook", "no serving certificate", flag(TLS_CERT) + " and "
                        + flag(TLS_KEY) + ", or --webhook-tls-secret")));
    }

    /**
     * The webhook of {@code tenant-gateway webhook}, which always serves it, checked.
     *
     * @param upstreamPath our path whose requests go to {@code --upstream}
     */
    public WebhookSettings serving(String upstreamPath) {
        if (Boolean.FALSE.equals(enableWebhook)) {
            throw new ConfigException("--enable-webhook", "false", "true: tenant-gateway webhook always serves it");
        }
        String missing = flag(webhookTlsCert == null ? TLS_CERT : TLS_KEY);
        return build(upstreamPath, () -> new ConfigException(missing, "missing",
                flag(TLS_CERT) + " and " + flag(TLS_KEY) + ", or --webhook-tls-secret"));
    }

    private WebhookSettings build(String upstreamPath, Supplier<ConfigException> noCertificate) {
        if ((webhookTlsCert == null || webhookTlsKey == null) && webhookTlsSecret == null) {
            throw noCertificate.get();
        }
        HostPort listen = HostPort.parse(flag(LISTEN), webhookListen);
        PolicyConfig policy = new PolicyConfig(schedulerName, forceOverwriteDefaultScheduler,
                hamiRelease(), enableAscend, enableIluvatar);
        if (webhookMaxConnections < 1) {
            throw new ConfigException(flag(MAX_CONNECTIONS), webhookMaxConnections, ">= 1");
        }
        WebhookConfig.Builder config = WebhookConfig.builder().host(listen.host()).port(listen.port())
                .policy(policy)
                .limits(ServerLimits.DEFAULTS.withMaxConnections(webhookMaxConnections))
                .clientAuth(webhookClientCa == null ? ClientAuthMode.NONE : ClientAuthMode.REQUIRE);
        Optional<Path> checkedUpstreamCa = Optional.empty();
        if (upstream != null) {
            if (upstreamCa == null) {
                throw new ConfigException("--upstream-ca", "missing", "the CA file that signs the certificate of "
                        + upstream);
            }
            URI url;
            try {
                url = new URI(upstream);
            } catch (URISyntaxException e) {
                throw new ConfigException("--upstream", upstream, "an https:// URL", e);
            }
            checkedUpstreamCa = Optional.of(ConfigFiles.require("--upstream-ca", upstreamCa));
            config.upstream(new UpstreamConfig(url, upstreamPath, GoDuration.parse("--upstream-timeout",
                    upstreamTimeout), FailurePolicy.parse(upstreamFailurePolicy)));
        } else if (upstreamCa != null) {
            throw new ConfigException("--upstream-ca", "given without --upstream", "both or neither");
        }
        // --device-config FILE wins over the ConfigMap; "" turns the watch off.
        Optional<String> watchedConfigMap = Optional.empty();
        if (deviceConfig == null && deviceConfigMap != null && !deviceConfigMap.isBlank()) {
            String value = deviceConfigMap.strip();
            DeviceConfigWatch.splitName(value);
            watchedConfigMap = Optional.of(value);
        }
        return new WebhookSettings(config.build(),
                Optional.ofNullable(ConfigFiles.optional(flag(TLS_CERT), webhookTlsCert)),
                Optional.ofNullable(ConfigFiles.optional(flag(TLS_KEY), webhookTlsKey)),
                Optional.ofNullable(webhookTlsSecret),
                Optional.ofNullable(ConfigFiles.optional(flag(CLIENT_CA), webhookClientCa)),
                deviceConfigFile(), checkedUpstreamCa, watchedConfigMap, certificates());
    }

    /** {@code --webhook-tls-self-managed} and its settings; the flags are checked only when it is on. */
    private Optional<WebhookCertificatesConfig> certificates() {
        if (!webhookTlsSelfManaged) {
            return Optional.empty();
        }
        if (webhookTlsSecret == null) {
            throw new ConfigException("--webhook-tls-self-managed", "true without --webhook-tls-secret",
                    "--webhook-tls-secret=NAMESPACE/NAME, the Secret the agents keep the certificates in, e.g."
                            + " kube-system/tenant-gateway-webhook-tls");
        }
        return Optional.of(WebhookCertificatesConfig.parse(webhookTlsSecret, webhookService, webhookTlsValidity,
                webhookTlsRenewBefore, webhookCaValidity, webhookCaOverlap));
    }

    /**
     * {@code --manage-webhook-config}: the MutatingWebhookConfiguration whose CA bundle the agent keeps current, with
     * the CA it writes (a file, or empty for the {@code ca.crt} of the webhook's Secret); empty when not managed.
     * That the webhook must be on as well is {@code AgentConfig}'s rule.
     */
    public Optional<ManagedWebhookConfiguration> managedConfiguration() {
        if (!manageWebhookConfig) {
            return Optional.empty();
        }
        Path caBundle = webhookCaBundle;
        if (caBundle == null && webhookTlsCert != null) {
            Path sibling = webhookTlsCert.resolveSibling("ca.crt");
            caBundle = Files.exists(sibling) ? sibling : null;
        }
        if (caBundle == null && webhookTlsSecret == null) {
            throw new ConfigException("--manage-webhook-config", "no CA bundle", "--webhook-ca-bundle, a ca.crt next"
                    + " to --webhook-tls-cert, or --webhook-tls-secret with a ca.crt key");
        }
        return Optional.of(new ManagedWebhookConfiguration(webhookConfigName,
                Optional.ofNullable(ConfigFiles.optional("--webhook-ca-bundle", caBundle))));
    }

    /** What {@code run} warns about at start for these flags, one line each. */
    public List<String> warnings() {
        List<String> out = new ArrayList<>();
        if (webhookTlsSelfManaged && !manageWebhookConfig) {
            out.add("--webhook-tls-self-managed=true without --manage-webhook-config: write the Secret's ca.crt into"
                    + " the webhook configuration's caBundle yourself, and again after each CA rotation");
        }
        return out;
    }
}
