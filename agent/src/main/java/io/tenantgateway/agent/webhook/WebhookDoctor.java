package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.hami.HamiWebhookConfiguration;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * {@code doctor}'s webhook lines: the serving certificate's files (with the tunnel's files), then, with the API, HAMi's
 * own webhook installed next to ours and HAMi's device ConfigMap as the webhook reads it. Each is a skipped line when
 * the webhook is off.
 */
final class WebhookDoctor {
    private final Optional<WebhookSettings> webhook;
    private final Optional<ManagedWebhookConfiguration> managed;
    private final DoctorContext context;

    WebhookDoctor(Optional<WebhookSettings> webhook, Optional<ManagedWebhookConfiguration> managed,
            DoctorContext context) {
        this.webhook = requireNonNull(webhook, "webhook");
        this.managed = requireNonNull(managed, "managed");
        this.context = requireNonNull(context, "context");
    }

    List<DoctorCheck> checks(DoctorStage stage) {
        return switch (stage) {
            case FILES -> List.of(webhookCert());
            case API -> List.of(hamiWebhook(), deviceConfigMap());
            default -> List.of();
        };
    }

    private DoctorCheck webhookCert() {
        if (webhook.isEmpty()) {
            return DoctorCheck.skip("webhook-cert", "webhook off");
        }
        if (webhook.get().tlsCert().isEmpty()) {
            return DoctorCheck.skip("webhook-cert", "serving certificate from Secret "
                    + webhook.get().tlsSecret().orElse("?") + " (read through the API at start)");
        }
        Path cert = webhook.get().tlsCert().get();
        CertBundle bundle;
        try {
            bundle = Pem.readBundle(cert, webhook.get().tlsKey().orElseThrow());
        } catch (RuntimeException e) {
            return DoctorCheck.fail("webhook-cert", e.getMessage(), "--webhook-tls-cert/--webhook-tls-key must be"
                    + " the webhook's PEM certificate and its unencrypted key (tenant-gateway certs init writes both)");
        }
        return DoctorCheck.certificateValidity("webhook-cert", cert, bundle.leaf(), "renew the webhook certificate"
                + " (names <service>.<namespace>.svc); the agent reloads it without a restart",
                context.clock().instant());
    }

    /** HAMi's own webhook installed next to ours: both mutate every GPU pod. */
    private DoctorCheck hamiWebhook() {
        if (webhook.isEmpty()) {
            return DoctorCheck.skip("hami-webhook", "the webhook is off");
        }
        if (!context.needsApi()) {
            return DoctorCheck.skip("hami-webhook", "no enabled part uses the Kubernetes API");
        }
        if (!context.apiOk()) {
            return DoctorCheck.skip("hami-webhook", "the Kubernetes API check failed");
        }
        String own = managed.map(ManagedWebhookConfiguration::name).orElse(WebhookFlags.DEFAULT_WEBHOOK_CONFIG_NAME);
        List<MutatingWebhookConfiguration> all;
        try (KubernetesClient client = context.kubernetes()) {
            all = client.admissionRegistration().v1().mutatingWebhookConfigurations().list().getItems();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("hami-webhook", "cannot list MutatingWebhookConfigurations: " + e.getMessage(),
                    "grant list on mutatingwebhookconfigurations (manifests/base ClusterRole)");
        }
        List<HamiWebhookCoexistence.Conflict> conflicts = HamiWebhookCoexistence.find(all, own);
        if (conflicts.isEmpty()) {
            return DoctorCheck.pass("hami-webhook", "no MutatingWebhookConfiguration other than " + own
                    + " serves HAMi's webhook (" + all.size() + " checked)");
        }
        HamiWebhookCoexistence.Conflict first = conflicts.get(0);
        return new DoctorCheck("hami-webhook", Outcome.FAIL, conflicts.size() == 1 ? first.describe()
                : conflicts.size() + " MutatingWebhookConfigurations serve HAMi's webhook next to tenant-gateway's",
                conflicts.size() == 1 ? first.fix() : HamiWebhookConfiguration.fix("<name>") + " for each",
                conflicts.size() == 1 ? List.of() : conflicts.stream().map(HamiWebhookCoexistence.Conflict::describe)
                        .toList());
    }

    /** HAMi's device ConfigMap, read and parsed as the webhook will. */
    private DoctorCheck deviceConfigMap() {
        Optional<String> name = webhook.flatMap(WebhookSettings::deviceConfigMap);
        if (name.isEmpty()) {
            return DoctorCheck.skip("device-config", webhook.flatMap(WebhookSettings::deviceConfig)
                    .map(file -> "--device-config " + file + " (read at start)").orElse(webhook.isEmpty()
                            ? "the webhook is off" : "--device-config-map=\"\": HAMi's defaults"));
        }
        if (!context.apiOk()) {
            return DoctorCheck.skip("device-config", "the Kubernetes API check failed");
        }
        String[] parts = DeviceConfigWatch.splitName(name.get());
        GenericKubernetesResource configMap;
        try (KubernetesClient client = context.kubernetes()) {
            // Untyped, as the webhook watches it: whatever a client stored there is read, then judged.
            configMap = client.genericKubernetesResources("v1", "ConfigMap").inNamespace(parts[0])
                    .withName(parts[1]).get();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("device-config", "cannot read ConfigMap " + name.get() + ": " + e.getMessage(),
                    "grant get/list/watch on that ConfigMap (manifests/base ClusterRole)");
        }
        if (configMap == null) {
            return DoctorCheck.warn("device-config", "ConfigMap " + name.get() + " not found: the webhook uses"
                    + " HAMi's defaults", "install HAMi's chart (it creates hami-scheduler-device), or point"
                    + " --device-config-map at the ConfigMap HAMi's scheduler reads");
        }
        try {
            DeviceConfig parsed = DeviceConfigWatch.parse(configMap, name.get());
            return DoctorCheck.pass("device-config", "ConfigMap " + name.get() + ": nvidia.resourceCountName="
                    + parsed.nvidia().resourceCountName());
        } catch (IllegalArgumentException e) {
            return DoctorCheck.fail("device-config", e.getMessage(), "correct device-config.yaml in the ConfigMap:"
                    + " the webhook keeps its last good config (and is not ready without one)");
        }
    }
}
