package io.tenantgateway.agent.k8s;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
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
        return create(config(kubeconfig));
    }

    /** The API access {@code kubeconfig} describes (the in-cluster service account when {@code null}); no client. */
    public static Config config(Path kubeconfig) {
        if (kubeconfig == null) {
            return Config.autoConfigure(null);
        }
        try {
            return Config.fromKubeconfig(Files.readString(kubeconfig));
        } catch (IOException e) {
            throw ConfigException.of("--kubeconfig", kubeconfig + ": cannot read: " + e.getMessage(), e);
        }
    }

    /**
     * A readiness reason for a failed call to the API: {@code tenant API https://10.0.0.1:6443 unreachable:
     * Connection refused} when the server cannot be reached, {@code tenant API … answered 403: …} when it refused,
     * the innermost message otherwise.
     */
    public static String describeFailure(KubernetesClient client, Throwable failure) {
        String api = "tenant API " + (client == null ? "?" : client.getConfiguration().getMasterUrl()
                .replaceAll("/+$", ""));
        Throwable root = failure;
        Integer code = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof io.fabric8.kubernetes.client.KubernetesClientException k && k.getCode() > 0
                    && code == null) {
                code = k.getCode();
            }
            root = t;
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        if (code != null) {
            return api + " answered " + code + ": " + message;
        }
        // Refused, unknown host, no route, socket timeout, closed channel: all IOExceptions.
        if (root instanceof IOException || root instanceof java.util.concurrent.TimeoutException) {
            return api + " unreachable: " + message;
        }
        return api + ": " + message;
    }

    /**
     * A client for {@code config}: no fabric8 retries (see {@link #create(Path)}), and no answer over
     * {@link ResponseSizeLimit#LIMIT} bytes read (a larger one fails the call).
     */
    public static KubernetesClient create(Config config) {
        config.setRequestRetryBackoffLimit(0);
        return new KubernetesClientBuilder().withConfig(config).withHttpClientBuilderConsumer(builder -> builder
                .addOrReplaceInterceptor("tenant-gateway-response-size",
                        new ResponseSizeLimit(ResponseSizeLimit.LIMIT))).build();
    }
}
