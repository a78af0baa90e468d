package io.tenantgateway.agent.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A kubeconfig file pointing at fabric8's mock API server, for code under test that reads {@code --kubeconfig}. */
public final class MockApiKubeconfig {
    private MockApiKubeconfig() {
    }

    /** Writes {@code dir/kubeconfig} for the server {@code client} talks to, with a bearer token user. */
    public static Path write(Path dir, KubernetesClient client) throws IOException {
        return write(dir, client.getMasterUrl().toString());
    }

    /** Writes {@code dir/kubeconfig} for an API server at {@code url} (which need not be listening yet). */
    public static Path write(Path dir, String url) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: mock, cluster: {server: "%s"}}]
                contexts: [{name: mock, context: {cluster: mock, user: mock}}]
                current-context: mock
                users: [{name: mock, user: {token: agent}}]
                """.formatted(url));
    }
}
