package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * How HAMi's own mutating webhook is installed (chart {@code charts/hami/templates/scheduler/webhook.yaml}): a
 * MutatingWebhookConfiguration {@code hami-webhook} with one entry {@code vgpu.hami.io} for pod CREATE, served by
 * the {@code hami-scheduler} Service. Left installed next to tenant-gateway's, every GPU pod is mutated by both, and
 * with HAMi's {@code failurePolicy: Ignore} an unreachable HAMi webhook goes unnoticed. {@link #servesHami} tells
 * such a configuration apart from everything else that mutates pods.
 */
public final class HamiWebhookConfiguration {
    /** The configuration's name in HAMi's chart ({@code <fullname>-webhook}, fullname {@code hami}). */
    public static final String CONFIG_NAME = "hami-webhook";
    /** The webhook entry's name. */
    public static final String ENTRY_NAME = "vgpu.hami.io";
    /** The Service that serves HAMi's webhook (and the scheduler extender). */
    public static final String SCHEDULER_SERVICE = "hami-scheduler";
    /** The value of HAMi's chart that turns its webhook off. */
    public static final String CHART_VALUE_OFF = "scheduler.admissionWebhook.enabled=false";

    private HamiWebhookConfiguration() {
    }

    /**
     * One entry ({@code webhooks[]}) of a MutatingWebhookConfiguration, reduced to what tells HAMi's apart.
     *
     * @param name the entry's name
     * @param serviceName {@code clientConfig.service.name}, or {@code ""}
     * @param url {@code clientConfig.url}, or {@code ""}
     * @param mutatesPodCreate whether a rule covers CREATE of core/v1 {@code pods} (wildcards included)
     */
    public record Entry(String name, String serviceName, String url, boolean mutatesPodCreate) {
        public Entry {
            requireNonNull(name, "name");
            requireNonNull(serviceName, "serviceName");
            requireNonNull(url, "url");
        }
    }

    /**
     * Why a MutatingWebhookConfiguration serves HAMi's webhook: an entry named {@code vgpu.hami.io}, or an entry with
     * HAMi's rules (pod CREATE) in a configuration named {@code hami-webhook} or sent to the {@code hami-scheduler}
     * Service. Other pod-mutating webhooks (sidecar injectors, …) are not HAMi's.
     *
     * @return the reason, e.g. {@code entry vgpu.hami.io}, or empty
     */
    public static Optional<String> servesHami(String configName, List<Entry> entries) {
        requireNonNull(configName, "configName");
        for (Entry entry : requireNonNull(entries, "entries")) {
            if (entry.name().equals(ENTRY_NAME)) {
                return Optional.of("entry " + ENTRY_NAME);
            }
            if (!entry.mutatesPodCreate()) {
                continue;
            }
            if (configName.equals(CONFIG_NAME)) {
                return Optional.of("entry " + entry.name() + " mutates pod CREATE in HAMi's configuration name");
            }
            if (entry.serviceName().equals(SCHEDULER_SERVICE) || entry.url().contains("//" + SCHEDULER_SERVICE + ".")
                    || entry.url().contains("//" + SCHEDULER_SERVICE + ":")) {
                return Optional.of("entry " + entry.name() + " sends pod CREATE to HAMi's " + SCHEDULER_SERVICE);
            }
        }
        return Optional.empty();
    }

    /** What to do about a HAMi webhook next to tenant-gateway's, for Events, logs and {@code doctor}. */
    public static String fix(String configName) {
        return "turn HAMi's webhook off: helm upgrade <release> hami-charts/hami --reuse-values --set "
                + CHART_VALUE_OFF + " (HAMi's chart), or kubectl delete mutatingwebhookconfiguration " + configName;
    }
}
