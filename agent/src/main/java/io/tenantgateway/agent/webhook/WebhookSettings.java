package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.webhook.WebhookConfig;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The webhook's settings and where its TLS material and device config come from: PEM files
 * ({@code tlsCert}/{@code tlsKey}) or a Secret read through the API ({@code tlsSecret}, NAMESPACE/NAME), which
 * the agents create and rotate themselves with {@code certificates} ({@code --webhook-tls-self-managed}); HAMi's
 * device config from a file ({@code deviceConfig}, which wins) or its ConfigMap watched through the API
 * ({@code deviceConfigMap}, NAMESPACE/NAME).
 */
public record WebhookSettings(WebhookConfig config, Optional<Path> tlsCert, Optional<Path> tlsKey,
        Optional<String> tlsSecret, Optional<Path> clientCa, Optional<Path> deviceConfig,
        Optional<Path> upstreamCa, Optional<String> deviceConfigMap,
        Optional<WebhookCertificatesConfig> certificates) {
    /** Without self-managed certificates. */
    public WebhookSettings(WebhookConfig config, Optional<Path> tlsCert, Optional<Path> tlsKey,
            Optional<String> tlsSecret, Optional<Path> clientCa, Optional<Path> deviceConfig,
            Optional<Path> upstreamCa, Optional<String> deviceConfigMap) {
        this(config, tlsCert, tlsKey, tlsSecret, clientCa, deviceConfig, upstreamCa, deviceConfigMap,
                Optional.empty());
    }

    /** Without self-managed certificates or a device ConfigMap. */
    public WebhookSettings(WebhookConfig config, Optional<Path> tlsCert, Optional<Path> tlsKey,
            Optional<String> tlsSecret, Optional<Path> clientCa, Optional<Path> deviceConfig,
            Optional<Path> upstreamCa) {
        this(config, tlsCert, tlsKey, tlsSecret, clientCa, deviceConfig, upstreamCa, Optional.empty());
    }

    public WebhookSettings {
        // Self-managed certificates live in --webhook-tls-secret: WebhookFlags builds them from it.
        requireNonNull(certificates, "certificates");
        requireNonNull(config, "config");
        requireNonNull(tlsCert, "tlsCert");
        requireNonNull(tlsKey, "tlsKey");
        requireNonNull(tlsSecret, "tlsSecret");
        requireNonNull(clientCa, "clientCa");
        requireNonNull(deviceConfig, "deviceConfig");
        requireNonNull(upstreamCa, "upstreamCa");
        if (tlsSecret.isPresent() == tlsCert.isPresent()) {
            throw new ConfigException("webhook TLS", (tlsSecret.isPresent() ? "both" : "neither")
                    + " --webhook-tls-cert/--webhook-tls-key and --webhook-tls-secret", "one of them");
        }
        if (tlsCert.isPresent() != tlsKey.isPresent()) {
            throw new ConfigException("--webhook-tls-cert/--webhook-tls-key", "only one given", "both");
        }
        requireNonNull(deviceConfigMap, "deviceConfigMap");
        if (deviceConfigMap.isPresent() && deviceConfig.isPresent()) {
            throw new ConfigException("--device-config and --device-config-map", "both in effect",
                    "the file, which wins, or the ConfigMap");
        }
    }
}
