package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.common.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Writes a CA bundle into every webhook of a MutatingWebhookConfiguration, so kube-apiserver trusts the webhook's
 * serving certificate. Only webhooks whose bundle differs are patched (JSON Patch on
 * {@code /webhooks/<i>/clientConfig/caBundle}, guarded by a {@code test} of the webhook's name so a concurrent
 * reorder cannot redirect the write).
 */
public final class CaBundleInjector {
    private CaBundleInjector() {
    }

    /** Outcome: how many webhooks were patched, out of how many. */
    public record Result(int patched, int webhooks) {
    }

    /**
     * @throws ConfigException when the configuration does not exist (the message says how to create it)
     */
    public static Result inject(KubernetesClient client, String configurationName, String caPem) {
        requireNonNull(client, "client");
        requireNonNull(configurationName, "configurationName");
        requireNonNull(caPem, "caPem");
        MutatingWebhookConfiguration current = client.admissionRegistration().v1().mutatingWebhookConfigurations()
                .withName(configurationName).get();
        if (current == null) {
            throw new ConfigException("MutatingWebhookConfiguration " + configurationName, "not found",
                    "the configuration from manifests/, e.g. kubectl apply -k manifests/base");
        }
        String bundle = Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII));
        List<String> operations = new ArrayList<>();
        List<MutatingWebhook> webhooks = current.getWebhooks() == null ? List.of() : current.getWebhooks();
        for (int i = 0; i < webhooks.size(); i++) {
            MutatingWebhook webhook = webhooks.get(i);
            String existing = webhook.getClientConfig() == null ? null : webhook.getClientConfig().getCaBundle();
            if (bundle.equals(existing)) {
                continue;
            }
            operations.add("{\"op\":\"test\",\"path\":\"/webhooks/" + i + "/name\",\"value\":\""
                    + webhook.getName() + "\"}");
            operations.add("{\"op\":\"add\",\"path\":\"/webhooks/" + i + "/clientConfig/caBundle\",\"value\":\""
                    + bundle + "\"}");
        }
        if (!operations.isEmpty()) {
            client.admissionRegistration().v1().mutatingWebhookConfigurations().withName(configurationName)
                    .patch(new PatchContext.Builder().withPatchType(PatchType.JSON).build(),
                            "[" + String.join(",", operations) + "]");
        }
        return new Result(operations.size() / 2, webhooks.size());
    }
}
