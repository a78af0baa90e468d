package io.tenantgateway.agent;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.devices.DeviceRegistrationConfig;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.agent.logging.LogSetup;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.webhook.WebhookConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The whole agent's configuration, built once from flags ({@link AgentCommand}) and validated. A part that is off
 * is an empty {@code Optional}; the tunnel is always on.
 *
 * @param tunnel the konnectivity-agent part
 * @param logFormat text or JSON logs
 * @param verbosity klog {@code -v}
 * @param nodeName this node, when known
 * @param webhook the HAMi webhook, when enabled
 * @param devices GPU device registration, when enabled
 * @param allocation the allocation / node-lock controller, when enabled
 * @param webhookConfiguration the MutatingWebhookConfiguration whose CA bundle the agent keeps current, when managed
 * @param shutdownGrace how long the first SIGTERM may take
 * @param profiling {@code --enable-profiling}: thread dump, heap histogram and JFR on the admin port
 * @param contentionProfiling {@code --enable-contention-profiling}: lock events in those JFR recordings
 */
public record AgentConfig(
        TunnelConfig tunnel,
        LogSetup.Format logFormat,
        int verbosity,
        Optional<String> nodeName,
        Optional<WebhookPart> webhook,
        Optional<DeviceRegistrationConfig> devices,
        Optional<AllocationConfig> allocation,
        Optional<ManagedWebhookConfiguration> webhookConfiguration,
        Duration shutdownGrace,
        boolean profiling,
        boolean contentionProfiling) {

    public AgentConfig {
        requireNonNull(tunnel, "tunnel");
        requireNonNull(logFormat, "logFormat");
        requireNonNull(nodeName, "nodeName");
        requireNonNull(webhook, "webhook");
        requireNonNull(devices, "devices");
        requireNonNull(allocation, "allocation");
        requireNonNull(webhookConfiguration, "webhookConfiguration");
        requireNonNull(shutdownGrace, "shutdownGrace");
        if (shutdownGrace.isNegative() || shutdownGrace.isZero()) {
            throw new IllegalArgumentException("--shutdown-grace: " + shutdownGrace + " (expected: > 0)");
        }
        if (webhookConfiguration.isPresent() && webhook.isEmpty()) {
            throw new IllegalArgumentException("--manage-webhook-config: true without the webhook (expected:"
                    + " --webhook-tls-cert/--webhook-tls-key or --enable-webhook)");
        }
    }

    /**
     * The webhook's settings and where its TLS material and device config come from: PEM files
     * ({@code tlsCert}/{@code tlsKey}) or a Secret read through the API ({@code tlsSecret}, NAMESPACE/NAME).
     */
    public record WebhookPart(WebhookConfig config, Optional<Path> tlsCert, Optional<Path> tlsKey,
            Optional<String> tlsSecret, Optional<Path> clientCa, Optional<Path> deviceConfig,
            Optional<Path> upstreamCa) {
        public WebhookPart {
            requireNonNull(config, "config");
            requireNonNull(tlsCert, "tlsCert");
            requireNonNull(tlsKey, "tlsKey");
            requireNonNull(tlsSecret, "tlsSecret");
            requireNonNull(clientCa, "clientCa");
            requireNonNull(deviceConfig, "deviceConfig");
            requireNonNull(upstreamCa, "upstreamCa");
            if (tlsSecret.isPresent() == tlsCert.isPresent()) {
                throw new IllegalArgumentException("webhook TLS: " + (tlsSecret.isPresent() ? "both" : "neither")
                        + " --webhook-tls-cert/--webhook-tls-key and --webhook-tls-secret (expected: one of them)");
            }
            if (tlsCert.isPresent() != tlsKey.isPresent()) {
                throw new IllegalArgumentException("--webhook-tls-cert/--webhook-tls-key: only one given (expected:"
                        + " both)");
            }
        }
    }

    /**
     * The MutatingWebhookConfiguration the agent keeps pointed at its CA.
     *
     * @param caBundle the CA file; empty means the {@code ca.crt} of the webhook's TLS Secret
     */
    public record ManagedWebhookConfiguration(String name, Optional<Path> caBundle) {
        public ManagedWebhookConfiguration {
            requireNonNull(name, "name");
            requireNonNull(caBundle, "caBundle");
        }
    }

    /** Whether the agent talks to the Kubernetes API at all (a pure tunnel does not). */
    public boolean needsKubernetes() {
        return devices.isPresent() || allocation.isPresent() || webhookConfiguration.isPresent()
                || tunnel.countServerLeases() || webhook.flatMap(WebhookPart::tlsSecret).isPresent();
    }

    /** The effective configuration for the startup log: no secrets, only paths. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>(tunnel.describe());
        out.put("node-name", nodeName.orElse("<unset>"));
        out.put("log-format", logFormat.name().toLowerCase(java.util.Locale.ROOT));
        out.put("v", Integer.toString(verbosity));
        out.put("webhook", webhook.map(w -> w.config().host() + ":" + w.config().port() + w.config().path()
                + " compat=" + w.config().policy().compat() + " scheduler=" + w.config().policy().schedulerName()
                + w.config().upstream().map(u -> " upstream=" + u.url() + " policy=" + u.failurePolicy()).orElse(""))
                .orElse("off"));
        out.put("devices", devices.map(d -> d.source().flagValue() + " split=" + d.splitCount() + " handshake="
                + TunnelConfig.format(d.handshakeInterval())).orElse("off"));
        out.put("lock-controller", allocation.map(a -> a.mode() + " node-lock-timeout="
                + TunnelConfig.format(a.nodeLockTimeout())).orElse("off"));
        out.put("manage-webhook-config", webhookConfiguration.map(ManagedWebhookConfiguration::name).orElse("off"));
        out.put("shutdown-grace", TunnelConfig.format(shutdownGrace));
        out.put("enable-profiling", Boolean.toString(profiling));
        out.put("enable-contention-profiling", Boolean.toString(contentionProfiling));
        return out;
    }
}
