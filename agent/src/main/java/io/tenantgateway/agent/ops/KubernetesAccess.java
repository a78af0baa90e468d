package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.webhook.WebhookSettings;
import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Permission;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

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

    /**
     * The permissions the parts enabled in {@code config} use (the doctor's own SSAR permission excluded). Node-name
     * discovery is not asked about: {@code resolveConfig} already made that call before the doctor runs.
     */
    static List<Permission> needed(AgentConfig config) {
        Set<Use> uses = EnumSet.copyOf(config.apiUses(false));
        uses.remove(Use.DOCTOR); // the mechanism of this check; a denial shows up as a failed request
        return uses.isEmpty() ? List.of() : KubernetesPermissions.needed(uses);
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
            return config.webhook().flatMap(WebhookSettings::tlsSecret).map(s -> s.split("/", 2)[0])
                    .orElse("");
        }
        if (permission.resource().equals("leases")) {
            return config.tunnel().map(tunnel -> tunnel.leaseNamespace()).orElse("");
        }
        if (permission.resource().equals("configmaps")) {
            return config.webhook().flatMap(WebhookSettings::deviceConfigMap).map(s -> s.split("/", 2)[0])
                    .orElse("");
        }
        return "";
    }

    private static String nameFor(Permission permission, AgentConfig config) {
        // Every Secret verb but create is granted by resourceNames (list and watch carry the name as a field
        // selector), so each is asked with the name; create cannot name a Secret.
        if (permission.resource().equals("secrets") && !permission.verb().equals("create")) {
            return config.webhook().flatMap(WebhookSettings::tlsSecret)
                    .map(s -> s.contains("/") ? s.split("/", 2)[1] : s).orElse(null);
        }
        if (permission.resource().equals("configmaps")) {
            // resourceNames-restricted for every verb: list/watch carry the name as a field selector.
            return config.webhook().flatMap(WebhookSettings::deviceConfigMap).map(s -> s.split("/", 2)[1])
                    .orElse(null);
        }
        if (permission.resource().startsWith("nodes") && (permission.verb().equals("get")
                || permission.verb().equals("patch"))) {
            return config.nodeName().orElse(null);
        }
        return null;
    }
}
