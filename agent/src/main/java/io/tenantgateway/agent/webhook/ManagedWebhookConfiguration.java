package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

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
