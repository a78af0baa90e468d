package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.Action;
import java.security.cert.X509Certificate;
import java.util.Locale;

/**
 * The self-managed certificates' metrics, registered on the owner's registry (one live controller per registry):
 * <ul>
 *   <li>{@code tenant_gateway_webhook_certificate_expiration_timestamp_seconds{certificate}} — {@code notAfter} of
 *       the certificate this agent serves ({@code serving}) and of the signing CA ({@code ca}), Unix seconds</li>
 *   <li>{@code tenant_gateway_webhook_certificate_rotations_total{action}} — writes of the Secret this agent won:
 *       {@code issue}, {@code renew}, {@code rotate-ca}, {@code prune}</li>
 *   <li>{@code tenant_gateway_webhook_certificate_write_conflicts_total} — writes another agent won first (409; this
 *       agent re-read and used theirs)</li>
 *   <li>{@code tenant_gateway_webhook_certificate_failures_total} — reconciles that failed (API errors, an unusable
 *       Secret)</li>
 * </ul>
 */
final class CertificateMetrics {
    private final PrometheusRegistry registry;
    private final Gauge expiration;
    private final Counter rotations;
    private final Counter conflicts;
    private final Counter failures;

    CertificateMetrics(PrometheusRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        expiration = Gauge.builder()
                .name("tenant_gateway_webhook_certificate_expiration_timestamp_seconds")
                .help("notAfter of the webhook certificate this agent serves (serving) and of its signing CA (ca)")
                .labelNames("certificate")
                .register(registry);
        rotations = Counter.builder()
                .name("tenant_gateway_webhook_certificate_rotations_total")
                .help("Writes of the self-managed webhook certificate Secret made by this agent, by action")
                .labelNames("action")
                .register(registry);
        for (Action action : Action.values()) {
            if (action != Action.KEEP) {
                rotations.initLabelValues(label(action));
            }
        }
        conflicts = Counter.builder()
                .name("tenant_gateway_webhook_certificate_write_conflicts_total")
                .help("Writes of the webhook certificate Secret that another agent made first (409 Conflict)")
                .register(registry);
        failures = Counter.builder()
                .name("tenant_gateway_webhook_certificate_failures_total")
                .help("Failed reconciles of the self-managed webhook certificate Secret")
                .register(registry);
    }

    static String label(Action action) {
        return action.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    void serving(X509Certificate serving, X509Certificate ca) {
        expiration.labelValues("serving").set(serving.getNotAfter().getTime() / 1000.0);
        if (ca != null) {
            expiration.labelValues("ca").set(ca.getNotAfter().getTime() / 1000.0);
        }
    }

    void rotated(Action action) {
        rotations.labelValues(label(action)).inc();
    }

    void conflict() {
        conflicts.inc();
    }

    void failed() {
        failures.inc();
    }

    /** Removes the metrics again, so that a successor can register on the same registry. */
    void unregister() {
        registry.unregister(expiration);
        registry.unregister(rotations);
        registry.unregister(conflicts);
        registry.unregister(failures);
    }
}
