package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.PartDoctor;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The webhook's entry in the list of parts: {@code webhook=}, {@code webhook-tls-self-managed=} and
 * {@code manage-webhook-config=} in the effective configuration, and {@code doctor}'s webhook lines
 * ({@link WebhookDoctor}, loaded only by {@code doctor}).
 */
public final class WebhookKind implements PartKind, PartDoctor {
    private final Optional<WebhookSettings> webhook;
    private final Optional<ManagedWebhookConfiguration> managed;

    public WebhookKind(Optional<WebhookSettings> webhook, Optional<ManagedWebhookConfiguration> managed) {
        this.webhook = requireNonNull(webhook, "webhook");
        this.managed = requireNonNull(managed, "managed");
    }

    @Override
    public String name() {
        return WebhookPart.NAME;
    }

    @Override
    public Optional<Part> part() {
        return webhook.<Part>map(settings -> new WebhookPart(settings, managed));
    }

    @Override
    public void describe(Map<String, String> out) {
        out.put("webhook", webhook.map(w -> w.config().host() + ":" + w.config().port() + w.config().path()
                + " compat=" + w.config().policy().compat() + " scheduler=" + w.config().policy().schedulerName()
                + " device-config=" + w.deviceConfig().map(Path::toString)
                        .orElse(w.deviceConfigMap().map(m -> "ConfigMap " + m).orElse("HAMi's defaults"))
                + w.config().upstream().map(u -> " upstream=" + u.url() + " policy=" + u.failurePolicy()).orElse(""))
                .orElse("off"));
        out.put("webhook-tls-self-managed", webhook.flatMap(WebhookSettings::certificates)
                .map(WebhookCertificatesConfig::describe).orElse("off"));
        out.put("manage-webhook-config", managed.map(ManagedWebhookConfiguration::name).orElse("off"));
    }

    @Override
    public List<DoctorCheck> doctor(DoctorStage stage, DoctorContext context) {
        return new WebhookDoctor(webhook, managed, context).checks(stage);
    }
}
