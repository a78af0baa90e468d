package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Permission;
import java.util.ArrayList;
import java.util.List;

/**
 * Asks the API server, one SelfSubjectAccessReview each, whether the agent's identity has every permission the
 * enabled parts use ({@link KubernetesPermissions}). Blocking: call from the CLI thread.
 */
final class KubernetesAccess {
    /**
     * One permission and the answer.
     *
     * @param permission what was asked
     * @param namespace the namespace asked about ({@code ""}: all namespaces / cluster scope)
     * @param allowed the API server's answer
     * @param reason the authorizer's reason, when it gave one
     */
    record Answer(Permission permission, String namespace, boolean allowed, String reason) {
    }

    private KubernetesAccess() {
    }

    /** The permissions the parts enabled in {@code config} use (the doctor's own SSAR permission excluded). */
    static List<Permission> needed(AgentConfig config) {
        List<Permission> out = new ArrayList<>();
        for (Permission permission : KubernetesPermissions.ALL) {
            if (applies(permission, config)) {
                out.add(permission);
            }
        }
        return out;
    }

    private static boolean applies(Permission permission, AgentConfig config) {
        String resource = permission.resource();
        if (resource.equals("selfsubjectaccessreviews")) {
            return false; // the mechanism of this check; a denial shows up as a failed request
        }
        if (resource.equals("secrets")) {
            return config.webhook().flatMap(AgentConfig.WebhookPart::tlsSecret).isPresent();
        }
        if (resource.equals("mutatingwebhookconfigurations")) {
            return config.webhookConfiguration().isPresent();
        }
        if (resource.equals("leases")) {
            return config.tunnel().countServerLeases();
        }
        String part = permission.part();
        return part.contains("devices") && config.devices().isPresent()
                || part.contains("lock-controller") && config.allocation().isPresent()
                // The webhook looks up ResourceQuotas whenever the agent has an API client at all.
                || part.contains("webhook quota") && config.webhook().isPresent() && config.needsKubernetes();
    }

    static List<Answer> review(KubernetesClient client, AgentConfig config, List<Permission> permissions) {
        requireNonNull(client, "client");
        List<Answer> answers = new ArrayList<>();
        for (Permission permission : permissions) {
            String namespace = namespaceFor(permission, config);
            String name = nameFor(permission, config);
            String[] resource = permission.resource().split("/", 2);
            ResourceAttributesBuilder attributes = new ResourceAttributesBuilder()
                    .withGroup(permission.group())
                    .withResource(resource[0])
                    .withSubresource(resource.length > 1 ? resource[1] : null)
                    .withVerb(permission.verb())
                    .withNamespace(namespace.isEmpty() ? null : namespace)
                    .withName(name);
            SelfSubjectAccessReview review = client.authorization().v1().selfSubjectAccessReview()
                    .create(new SelfSubjectAccessReviewBuilder().withNewSpec()
                            .withResourceAttributes(attributes.build()).endSpec().build());
            boolean allowed = review.getStatus() != null && Boolean.TRUE.equals(review.getStatus().getAllowed());
            String reason = review.getStatus() == null || review.getStatus().getReason() == null ? ""
                    : review.getStatus().getReason();
            answers.add(new Answer(permission, namespace, allowed, reason));
        }
        return answers;
    }

    private static String namespaceFor(Permission permission, AgentConfig config) {
        if (permission.resource().equals("secrets")) {
            return config.webhook().flatMap(AgentConfig.WebhookPart::tlsSecret).map(s -> s.split("/", 2)[0])
                    .orElse("");
        }
        if (permission.resource().equals("leases")) {
            return config.tunnel().leaseNamespace();
        }
        return "";
    }

    private static String nameFor(Permission permission, AgentConfig config) {
        if (permission.resource().equals("secrets") && permission.verb().equals("get")) {
            return config.webhook().flatMap(AgentConfig.WebhookPart::tlsSecret)
                    .map(s -> s.contains("/") ? s.split("/", 2)[1] : s).orElse(null);
        }
        if (permission.resource().startsWith("nodes") && (permission.verb().equals("get")
                || permission.verb().equals("patch"))) {
            return config.nodeName().orElse(null);
        }
        return null;
    }
}
