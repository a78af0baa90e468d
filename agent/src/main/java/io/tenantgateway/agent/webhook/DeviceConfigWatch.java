package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.InvalidDeviceConfigException;
import io.tenantgateway.webhook.policy.InvalidDeviceConfigException.Problem;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.k8s.InformerWatch;
import io.tenantgateway.agent.k8s.EventRecorder;

/**
 * HAMi's device configuration from its ConfigMap ({@code kube-system/hami-scheduler-device}, key
 * {@code device-config.yaml}) read through the API and applied live: the agent's DaemonSet cannot mount that
 * ConfigMap (Kamaji's accepts only arguments), and a file-less agent would otherwise decide with HAMi's defaults.
 *
 * <ul>
 *   <li>A change that parses is handed to every subscriber (the webhook swaps its policy): admissions after it use
 *       it, nothing restarts.</li>
 *   <li>A change that is not used keeps the last good configuration: one Warning Event on the ConfigMap
 *       ({@code DeviceConfigRejected}, through the agent's {@link io.tenantgateway.agent.k8s.EventCorrelator}: a
 *       repeated error bumps the count of the Event already written, a flood of versions makes at most 25 writes),
 *       a log line per rejected version, {@code tenant_gateway_device_config_rejected_total{reason}} counts it,
 *       {@code tenant_gateway_device_config_invalid} is 1 and the readiness detail names the reason and the error,
 *       until a good version arrives.</li>
 *   <li>Whatever a client stored is read as data, never as a failure of the watch: the ConfigMap is watched
 *       untyped, so {@code data} that is not a map of strings (a raw write can store an object there), a value over
 *       1 MiB or a key only under {@code binaryData} is a rejected version like any other. Should the watch stop
 *       anyway, readiness fails and says so.</li>
 *   <li>No ConfigMap: HAMi's defaults (said once); deleted later: the last configuration stays.</li>
 * </ul>
 *
 * <p>Threading: the informer's callbacks only ask an {@link InformerWatch} for one more look; its worker parses,
 * records Events and calls the subscribers, one change at a time (changes that arrive meanwhile coalesce: the
 * worker reads the newest version). {@link #readiness()} and {@link #current()} read volatile state.
 *
 * <p>Lifecycle: not a {@link io.tenantgateway.common.lifecycle.Lifecycle}, on purpose (as
 * {@link KubernetesQuotaLookup}): the agent retries {@link #start()} on this one instance until the API answers, so
 * a failed start leaves it startable again. One live instance per {@link PrometheusRegistry} ({@link #close()}
 * unregisters its metrics).
 */
public final class DeviceConfigWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeviceConfigWatch.class);
    /** The Event reason for a ConfigMap version that is not used. */
    public static final String REJECTED_REASON = "DeviceConfigRejected";
    static final String APPLIED = "applied";
    static final String REJECTED = "rejected";

    private final String namespace;
    private final String name;
    private final EventRecorder events;
    private final PrometheusRegistry registry;
    private final Counter reloads;
    private final Counter rejected;
    private final Gauge invalid;
    private final List<Consumer<DeviceConfig>> subscribers = new CopyOnWriteArrayList<>();
    private final Object applyLock = new Object();

    private volatile DeviceConfig current = DeviceConfig.defaults();
    /** Where {@link #current} came from: {@code "HAMi's defaults"} or the ConfigMap's resourceVersion. */
    private volatile String currentSource = "HAMi's defaults";
    private volatile boolean fromConfigMap;
    private volatile boolean reconciled;
    /** Why the newest version is not used; {@code null} while it is. */
    private volatile Rejection rejection;
    /** The resourceVersion whose error was last reported (worker thread only). */
    private String reportedVersion;
    private boolean saidAbsent;

    private final InformerWatch<GenericKubernetesResource> watch;

    /**
     * @param namespaceAndName {@code NAMESPACE/NAME} of HAMi's device ConfigMap
     * @param events Warning Events about the ConfigMap go here
     */
    public DeviceConfigWatch(KubernetesClient client, String namespaceAndName, EventRecorder events,
            PrometheusRegistry registry) {
        requireNonNull(client, "client");
        String[] parts = splitName(namespaceAndName);
        this.namespace = parts[0];
        this.name = parts[1];
        this.events = requireNonNull(events, "events");
        this.registry = requireNonNull(registry, "registry");
        this.reloads = Counter.builder().name("tenant_gateway_device_config_reloads_total")
                .help("Versions of HAMi's device ConfigMap seen by the webhook, by result (applied, rejected)")
                .labelNames("result").register(registry);
        this.rejected = Counter.builder().name("tenant_gateway_device_config_rejected_total")
                .help("Versions of HAMi's device ConfigMap not used, by reason: too_large (over 1 MiB), not_yaml,"
                        + " no_key (no data.device-config.yaml), not_text (the value is not a string),"
                        + " invalid_value (a key's type or range)")
                .labelNames("reason").register(registry);
        this.invalid = Gauge.builder().name("tenant_gateway_device_config_invalid")
                .help("1 while the newest version of HAMi's device ConfigMap is rejected and an older"
                        + " configuration is in use")
                .register(registry);
        reloads.initLabelValues(APPLIED);
        reloads.initLabelValues(REJECTED);
        for (Problem problem : Problem.values()) {
            rejected.initLabelValues(problem.label());
        }
        invalid.set(0);
        // Untyped: a ConfigMap whose data the typed model cannot hold (an object under a key) is still delivered.
        this.watch = new InformerWatch<>("device config watch for ConfigMap " + configMap(), "device-config-watch",
                () -> client.genericKubernetesResources("v1", "ConfigMap").inNamespace(namespace).withName(name)
                        .runnableInformer(0), this::reconcile);
    }

    /**
     * {@code NAMESPACE/NAME} as {@code --device-config-map} takes it, checked.
     *
     * @throws ConfigException naming the flag and what was expected
     */
    public static String[] splitName(String namespaceAndName) {
        requireNonNull(namespaceAndName, "namespaceAndName");
        String[] parts = namespaceAndName.split("/", -1);
        String label = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";
        String subdomain = "[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?";
        if (parts.length != 2 || !parts[0].matches(label) || !parts[1].matches(subdomain)) {
            throw new ConfigException("--device-config-map", "'" + namespaceAndName + "'",
                    "NAMESPACE/NAME such as kube-system/hami-scheduler-device, or \"\" not to watch it");
        }
        return parts;
    }

    /** {@code namespace/name}. */
    public String configMap() {
        return namespace + "/" + name;
    }

    /**
     * Lists the ConfigMap and starts watching it; blocks until the first list. A failure leaves nothing running, so
     * it may be called again (the agent retries it in the background).
     */
    public void start() {
        try {
            watch.start(); // also when the ConfigMap does not exist: the defaults are then decided on
        } catch (Exception e) {
            throw new IllegalStateException("--device-config-map: cannot read ConfigMap " + configMap() + ": "
                    + e.getMessage(), e);
        }
    }

    /** Runs on the watch's worker: one version of the ConfigMap (or its absence). */
    private void reconcile(Store<GenericKubernetesResource> store) {
        GenericKubernetesResource configMap = store.getByKey(configMap());
        if (configMap == null) {
            if (fromConfigMap) {
                log.warn("ConfigMap {} deleted; the webhook keeps the device config it had ({})", configMap(),
                        currentSource);
            } else if (!saidAbsent) {
                saidAbsent = true;
                log.info("ConfigMap {} not found: the webhook uses HAMi's default device config until it appears",
                        configMap());
            }
            reconciled = true;
            return;
        }
        String version = configMap.getMetadata().getResourceVersion();
        DeviceConfig parsed;
        try {
            parsed = parse(configMap, configMap());
        } catch (InvalidDeviceConfigException e) {
            reject(configMap, version, e);
            reconciled = true;
            return;
        }
        boolean wasInvalid = rejection != null;
        rejection = null;
        invalid.set(0);
        if (!fromConfigMap || !parsed.equals(current)) {
            apply(parsed, "ConfigMap " + configMap() + " resourceVersion " + version);
            reloads.labelValues(APPLIED).inc();
            log.info("device config from ConfigMap {} resourceVersion {} applied: nvidia.resourceCountName={}",
                    configMap(), version, parsed.nvidia().resourceCountName());
        } else if (wasInvalid) {
            log.info("ConfigMap {} resourceVersion {} is valid again (same device config as in use)", configMap(),
                    version);
        }
        reportedVersion = null;
        reconciled = true;
    }

    /**
     * HAMi's device config from a ConfigMap as the API delivered it, whatever a client stored there.
     *
     * @param name {@code namespace/name}, for messages
     * @throws InvalidDeviceConfigException naming the ConfigMap, the key and what was expected
     */
    public static DeviceConfig parse(GenericKubernetesResource configMap, String name) {
        String source = "ConfigMap " + name + " data." + DeviceConfig.CONFIG_MAP_KEY;
        Object data = configMap.getAdditionalProperties().get("data");
        if (data != null && !(data instanceof Map)) {
            throw new InvalidDeviceConfigException(Problem.NOT_TEXT, "ConfigMap " + name + " data", describe(data),
                    "a map of strings");
        }
        Object value = data == null ? null : ((Map<?, ?>) data).get(DeviceConfig.CONFIG_MAP_KEY);
        if (value == null) {
            Object binary = configMap.getAdditionalProperties().get("binaryData");
            boolean inBinary = binary instanceof Map<?, ?> map && map.containsKey(DeviceConfig.CONFIG_MAP_KEY);
            throw new InvalidDeviceConfigException(Problem.NO_KEY, "ConfigMap " + name, inBinary
                    ? "binaryData." + DeviceConfig.CONFIG_MAP_KEY + " only" : "no data." + DeviceConfig.CONFIG_MAP_KEY,
                    "HAMi's device-config.yaml as text under data." + DeviceConfig.CONFIG_MAP_KEY);
        }
        if (!(value instanceof String yaml)) {
            throw new InvalidDeviceConfigException(Problem.NOT_TEXT, source, describe(value),
                    "HAMi's device-config.yaml as text");
        }
        return DeviceConfig.parse(yaml, source);
    }

    /** What a JSON value is, for messages. */
    private static String describe(Object value) {
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "a list";
        }
        if (value instanceof Number) {
            return "a number";
        }
        return value instanceof Boolean ? "a boolean" : "a " + value.getClass().getSimpleName();
    }

    private void reject(GenericKubernetesResource configMap, String version, InvalidDeviceConfigException e) {
        String error = e.getMessage();
        Rejection previous = rejection;
        boolean news = previous == null || !error.equals(previous.error())
                || !String.valueOf(version).equals(reportedVersion);
        rejection = new Rejection(e.problem(), error);
        invalid.set(1);
        if (!news) {
            return; // a resync of the version already reported
        }
        reportedVersion = String.valueOf(version);
        reloads.labelValues(REJECTED).inc();
        rejected.labelValues(e.problem().label()).inc();
        log.warn("ConfigMap {} resourceVersion {} rejected ({}): {}; keeping the device config in use ({})",
                configMap(), version, e.problem().label(), error, currentSource);
        ObjectReference ref = new ObjectReferenceBuilder().withApiVersion("v1").withKind("ConfigMap")
                .withNamespace(namespace).withName(name).withUid(configMap.getMetadata().getUid())
                .withResourceVersion(version).build();
        // No resourceVersion in the message: the same error again is the same Event, its count bumped.
        events.record(ref, EventRecorder.WARNING, REJECTED_REASON, error + "; " + (fromConfigMap
                ? "the webhook keeps the last valid version" : "the webhook keeps HAMi's defaults (no valid version"
                        + " yet)"));
    }

    private void apply(DeviceConfig config, String source) {
        synchronized (applyLock) {
            current = config;
            currentSource = source;
            fromConfigMap = true;
            for (Consumer<DeviceConfig> subscriber : subscribers) {
                subscriber.accept(config);
            }
        }
    }

    /**
     * Calls {@code subscriber} now with the current configuration and again with every change applied later
     * (on the watch's worker thread). No change is missed between the two.
     */
    public void subscribe(Consumer<DeviceConfig> subscriber) {
        requireNonNull(subscriber, "subscriber");
        synchronized (applyLock) {
            subscribers.add(subscriber);
            subscriber.accept(current);
        }
    }

    /** The configuration in use: the last good ConfigMap version, else HAMi's defaults. */
    public DeviceConfig current() {
        return current;
    }

    /** The error of the newest ConfigMap version when it was rejected, else {@code null}. */
    public String lastError() {
        Rejection current = rejection;
        return current == null ? null : current.error();
    }

    /** Whether the ConfigMap was listed and its first version (or absence) decided on. */
    public boolean synced() {
        return reconciled;
    }

    /**
     * Readiness: not ready until the ConfigMap was read once, nor while no version of it ever parsed (the webhook
     * would decide with defaults the cluster did not configure); ready, with the error as detail, while a newer
     * version is rejected and the last good one is in use.
     */
    public Readiness readiness() {
        if (!reconciled) {
            return Readiness.failed("ConfigMap " + configMap()
                    + " not read yet");
        }
        String stopped = watch.stopped();
        if (stopped != null) {
            return Readiness.failed("watch of ConfigMap " + configMap() + " stopped (" + stopped + "): changes are"
                    + " not seen; using " + currentSource);
        }
        Rejection current = rejection;
        if (current == null) {
            return Readiness.OK;
        }
        String rejected = "newest version rejected (" + current.problem().label() + "): " + current.error();
        if (!fromConfigMap) {
            return Readiness.failed(rejected + "; no valid version yet (fix the ConfigMap; HAMi's defaults"
                    + " meanwhile)");
        }
        return new Readiness(true, rejected + "; using " + currentSource);
    }

    /** A version not used: why, as a metric label and as the error. */
    private record Rejection(Problem problem, String error) {
    }

    /** Ready or not, and why ({@code ok}, or a detail also when ready); the agent's readiness check shows it. */
    public record Readiness(boolean ready, String detail) {
        static final Readiness OK = new Readiness(true, "ok");

        static Readiness failed(String detail) {
            return new Readiness(false, detail);
        }
    }

    @Override
    public void close() {
        watch.close();
        registry.unregister(reloads);
        registry.unregister(rejected);
        registry.unregister(invalid);
    }
}
