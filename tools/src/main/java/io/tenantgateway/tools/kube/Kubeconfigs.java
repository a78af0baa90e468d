package io.tenantgateway.tools.kube;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Kubeconfig files for the tools' mock API servers (lab tenants, the footprint bench's agent). */
public final class Kubeconfigs {
    private Kubeconfigs() {
    }

    /**
     * Writes {@code file}: one cluster, context and user named {@code name}, the API server at {@code url}, a bearer
     * {@code token} (the mock servers accept any) and the context's {@code namespace}.
     */
    public static Path write(Path file, String name, String url, String namespace, String token) {
        try {
            return Files.writeString(file, """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: %1$s, cluster: {server: "%2$s"}}]
                    contexts: [{name: %1$s, context: {cluster: %1$s, user: %1$s, namespace: %3$s}}]
                    current-context: %1$s
                    users: [{name: %1$s, user: {token: %4$s}}]
                    """.formatted(name, url, namespace, token));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
