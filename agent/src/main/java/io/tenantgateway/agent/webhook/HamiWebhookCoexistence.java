package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.RuleWithOperations;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.hami.HamiWebhookConfiguration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.tenantgateway.agent.k8s.InformerWatch;
import io.tenantgateway.agent.k8s.EventRecorder;

/**
 * Reports HAMi's own mutating webhook installed next to ours ({@link HamiWebhookConfiguration#servesHami}): every GPU
 * pod would be mutated twice, and HAMi's {@code failurePolicy: Ignore} hides its outages. Once when the agent
 * starts and again whenever the set of such configurations changes: a Warning Event
 * ({@code HamiWebhookConflict}) on each newly found configuration with the fix, a log line, and the gauge
 * {@code tenant_gateway_hami_webhook_conflicts}. Our own configuration ({@code --webhook-config-name}) is never
 * reported.
 *
 * <p>Threading: informer callbacks only ask an {@link InformerWatch} for one more look; its worker compares the
 * informer's cache with what was reported and records the Events. {@link #conflicts()} reads a volatile snapshot.
 *
 * <p>Lifecycle: not a {@link io.tenantgateway.common.lifecycle.Lifecycle}, on purpose (retried {@link #start()} on
 * one instance, as {@link KubernetesQuotaLookup}). One live instance per {@link PrometheusRegistry}.
 */
public final class HamiWebhookCoexistence implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HamiWebhookCoexistence.class);
    /** The Event reason. */
    public static final String CONFLICT_REASON = "HamiWebhookConflict";

    /** One configuration that serves HAMi's webhook, and why it counts as HAMi's. */
    public record Conflict(String configuration, String reason) {
        /** The line for logs, Events and {@code doctor}. */
        public String describe() {
            return "MutatingWebhookConfiguration " + configuration + " serves HAMi's webhook (" + reason
                    + ") next to tenant-gateway's: GPU pods are mutated twice and HAMi's failurePolicy Ignore hides"
                    + " its outages";
        }

        public String fix() {
            return HamiWebhookConfiguration.fix(configuration);
        }
    }

    private final String ownConfiguration;
    private final EventRecorder events;
    private final PrometheusRegistry registry;
    private final Gauge gauge;
    private volatile List<Conflict> conflicts = List.of();
    private volatile boolean checked;
    /** What was last reported, by configuration name (worker thread only). */
    private Map<String, String> reported = Map.of();
    private final InformerWatch<MutatingWebhookConfiguration> watch;

    /**
     * @param ownConfiguration our MutatingWebhookConfiguration ({@code --webhook-config-name}), never reported
     */
    public HamiWebhookCoexistence(KubernetesClient client, String ownConfiguration, EventRecorder events,
            PrometheusRegistry registry) {
        requireNonNull(client, "client");
        this.ownConfiguration = requireNonNull(ownConfiguration, "ownConfiguration");
        this.events = requireNonNull(events, "events");
        this.registry = requireNonNull(registry, "registry");
        this.gauge = Gauge.builder().name("tenant_gateway_hami_webhook_conflicts")
                .help("MutatingWebhookConfigurations other than tenant-gateway's that serve HAMi's webhook"
                        + " (vgpu.hami.io); should be 0")
                .register(registry);
        this.watch = new InformerWatch<>("HAMi webhook check", "hami-webhook-check",
                () -> client.admissionRegistration().v1().mutatingWebhookConfigurations().runnableInformer(0),
                this::check);
    }

    /** The configurations among {@code all} that serve HAMi's webhook, ours ({@code ownConfiguration}) left out. */
    public static List<Conflict> find(List<MutatingWebhookConfiguration> all, String ownConfiguration) {
        List<Conflict> found = new ArrayList<>();
        for (MutatingWebhookConfiguration configuration : all) {
            String name = configuration.getMetadata() == null ? "" : configuration.getMetadata().getName();
            if (name == null || name.equals(ownConfiguration)) {
                continue;
            }
            List<HamiWebhookConfiguration.Entry> entries = new ArrayList<>();
            for (MutatingWebhook webhook : Optional.ofNullable(configuration.getWebhooks()).orElse(List.of())) {
                var clientConfig = webhook.getClientConfig();
                String service = clientConfig == null || clientConfig.getService() == null
                        || clientConfig.getService().getName() == null ? "" : clientConfig.getService().getName();
                String url = clientConfig == null || clientConfig.getUrl() == null ? "" : clientConfig.getUrl();
                entries.add(new HamiWebhookConfiguration.Entry(webhook.getName() == null ? "" : webhook.getName(),
                        service, url, mutatesPodCreate(webhook.getRules())));
            }
            HamiWebhookConfiguration.servesHami(name, entries).ifPresent(reason -> found.add(new Conflict(name,
                    reason)));
        }
        found.sort(java.util.Comparator.comparing(Conflict::configuration));
        return List.copyOf(found);
    }

    private static boolean mutatesPodCreate(List<RuleWithOperations> rules) {
        for (RuleWithOperations rule : Optional.ofNullable(rules).orElse(List.of())) {
            if (matches(rule.getApiGroups(), "") && matches(rule.getApiVersions(), "v1")
                    && matches(rule.getOperations(), "CREATE") && matches(rule.getResources(), "pods")) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(List<String> values, String wanted) {
        return values != null && (values.contains(wanted) || values.contains("*")
                || (wanted.equals("pods") && values.contains("*/*")));
    }

    /** Lists the configurations and starts watching them; blocks until the first list. Retryable. */
    public void start() {
        try {
            watch.start();
        } catch (Exception e) {
            throw new IllegalStateException("HAMi webhook check: cannot list MutatingWebhookConfigurations: "
                    + e.getMessage(), e);
        }
    }

    /** Runs on the worker: reports configurations that newly serve HAMi's webhook, and those that stopped. */
    private void check(Store<MutatingWebhookConfiguration> store) {
        List<MutatingWebhookConfiguration> all = store.list();
        List<Conflict> now = find(all, ownConfiguration);
        Map<String, String> current = new LinkedHashMap<>();
        for (Conflict conflict : now) {
            current.put(conflict.configuration(), conflict.reason());
            if (!conflict.reason().equals(reported.get(conflict.configuration()))) {
                log.warn("{}; fix: {}", conflict.describe(), conflict.fix());
                MutatingWebhookConfiguration object = all.stream()
                        .filter(c -> conflict.configuration().equals(c.getMetadata().getName())).findFirst()
                        .orElseThrow();
                ObjectReference ref = new ObjectReferenceBuilder()
                        .withApiVersion("admissionregistration.k8s.io/v1").withKind("MutatingWebhookConfiguration")
                        .withName(conflict.configuration()).withUid(object.getMetadata().getUid())
                        .withResourceVersion(object.getMetadata().getResourceVersion()).build();
                events.record(ref, EventRecorder.WARNING, CONFLICT_REASON, conflict.describe() + "; fix: "
                        + conflict.fix());
            }
        }
        for (String gone : reported.keySet()) {
            if (!current.containsKey(gone)) {
                log.info("MutatingWebhookConfiguration {} no longer serves HAMi's webhook", gone);
            }
        }
        reported = current;
        conflicts = now;
        gauge.set(now.size());
        checked = true;
    }

    /** The configurations found at the last check (empty before the first). */
    public List<Conflict> conflicts() {
        return conflicts;
    }

    /** Whether the configurations were listed and checked once. */
    public boolean checked() {
        return checked;
    }

    @Override
    public void close() {
        watch.close();
        registry.unregister(gauge);
    }
}
