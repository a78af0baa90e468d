package io.tenantgateway.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.webhook.AdmissionClient.Admission;
import io.tenantgateway.webhook.policy.Decision;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Admission through the real {@link WebhookServer} over HTTPS, read back into the {@link Decision} the pure policy
 * returns, so a policy test can check each of its assertions on the wire: one server per (policy, device config,
 * quota lookup), started on first use and kept until {@link #close()}, one HTTPS client for all. Public only for the
 * policy package's VendorRulesOverTlsIT; the fixtures it uses stay package-private. Not thread-safe.
 */
public final class TlsAdmitter implements AutoCloseable {
    private final WebhookFixture fixture = new WebhookFixture();
    private final Map<Server, Integer> ports = new HashMap<>();

    /** What a server is started with: equal configurations share a server, quota lookups by identity. */
    private record Server(PolicyConfig policy, DeviceConfig devices, QuotaLookup quota) {
    }

    /**
     * Posts a pod CREATE review for {@code pod} in {@code namespace} to the server for this configuration and
     * rebuilds the decision from the answer: outcome (allowed; reason Forbidden: denied; else errored), code,
     * reason, message, warnings, and for an allowed pod the pod sent with the returned JSONPatch applied.
     * {@link QuotaLookup#NONE} starts the server without a lookup, as the standalone command does.
     */
    public Decision admit(PolicyConfig policy, DeviceConfig devices, QuotaLookup quota, JsonNode pod,
            String namespace) {
        int port = ports.computeIfAbsent(new Server(policy, devices, quota), server -> fixture.start(
                WebhookFixture.loopback().policy(policy).build(), devices, quota == QuotaLookup.NONE ? null : quota,
                new PrometheusRegistry()).port());
        ObjectNode review = Reviews.podCreate(pod.deepCopy());
        ((ObjectNode) review.get("request")).put("namespace", namespace);
        return decision(fixture.client.admit(port, review));
    }

    private static Decision decision(Admission admission) {
        JsonNode response = admission.response();
        boolean allowed = response.path("allowed").booleanValue();
        String reason = admission.reason();
        Decision.Outcome outcome = allowed ? Decision.Outcome.ALLOWED
                : reason.equals("Forbidden") ? Decision.Outcome.DENIED : Decision.Outcome.ERRORED;
        JsonNode mutated = null;
        if (!allowed) {
            assertThat(admission.patch()).as("a refused pod gets no patch").isNull();
        } else {
            mutated = admission.patchedPod();
            if (admission.patch() != null) {
                assertThat(mutated).as("a patch is only sent when it changes the pod")
                        .isNotEqualTo(admission.review().path("request").path("object"));
            }
        }
        List<String> warnings = new ArrayList<>();
        response.path("warnings").forEach(warning -> warnings.add(warning.asString()));
        return new Decision(outcome, admission.code(), reason, admission.message(), mutated, warnings);
    }

    @Override
    public void close() {
        fixture.close();
    }
}
