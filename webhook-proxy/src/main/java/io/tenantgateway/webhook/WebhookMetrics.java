package io.tenantgateway.webhook;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;

/** The webhook's metrics, registered on the owner's registry. */
final class WebhookMetrics {
    static final String REQUESTS = "tenant_gateway_webhook_requests_total";
    static final String DURATION = "tenant_gateway_webhook_request_duration_seconds";
    static final String UPSTREAM_ERRORS = "tenant_gateway_webhook_upstream_errors_total";
    static final String BODIES_CUT = "tenant_gateway_webhook_request_bodies_cut_total";

    private final Counter requests;
    private final Histogram duration;
    private final Counter upstreamErrors;
    private final Counter bodiesCut;

    WebhookMetrics(PrometheusRegistry registry) {
        requests = Counter.builder()
                .name(REQUESTS)
                .help("Admission requests answered, by decision (allowed, denied, errored) and status code")
                .labelNames("decision", "code")
                .register(registry);
        duration = Histogram.builder()
                .name(DURATION)
                .help("Time from request arrival to answer, including the upstream call in proxy mode")
                .classicOnly()
                .classicUpperBounds(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .register(registry);
        upstreamErrors = Counter.builder()
                .name(UPSTREAM_ERRORS)
                .help("Upstream webhook calls that gave no usable answer, by reason")
                .labelNames("reason")
                .register(registry);
        bodiesCut = Counter.builder()
                .name(BODIES_CUT)
                .help("Request bodies still arriving after 1s, cut (connection closed) to make room in the full"
                        + " webhook-bodies memory budget")
                .register(registry);
    }

    void bodyCut() {
        bodiesCut.inc();
    }

    void answered(String decision, int code, Duration elapsed) {
        requests.labelValues(decision, Integer.toString(code)).inc();
        duration.observe(elapsed.toNanos() / 1e9);
    }

    void upstreamFailed(String reason) {
        upstreamErrors.labelValues(reason).inc();
    }
}
