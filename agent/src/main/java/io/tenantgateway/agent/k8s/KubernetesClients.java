package io.tenantgateway.agent.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the agent's one Kubernetes client. */
public final class KubernetesClients {
    private KubernetesClients() {
    }

    /**
     * A client from {@code kubeconfig}, or the in-cluster service account when {@code null}. fabric8's own request
     * retries are off: our controllers retry writes themselves after re-reading (a blind resend of a
     * compare-and-swap patch only repeats the conflict).
     */
    public static KubernetesClient create(Path kubeconfig) {
        Config config;
        if (kubeconfig == null) {
            config = Config.autoConfigure(null);
        } else {
            try {
                config = Config.fromKubeconfig(Files.readString(kubeconfig));
            } catch (IOException e) {
                throw new UncheckedIOException("--kubeconfig: " + kubeconfig + ": cannot read: " + e.getMessage(), e);
            }
        }
        return create(config);
    }

    public static KubernetesClient create(Config config) {
        config.setRequestRetryBackoffLimit(0);
        return new KubernetesClientBuilder().withConfig(config).build();
    }
}
