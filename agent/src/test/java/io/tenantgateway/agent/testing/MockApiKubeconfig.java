package io.tenantgateway.agent.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.nio.file.Files;
import java.nio.file.Path;

/** A kubeconfig file pointing at fabric8's mock API server, for code under test that reads {@code --kubeconfig}. */
public final class MockApiKubeconfig {
    private MockApiKubeconfig() {
    }

    /** fabric8's mock API server in CRUD mode on 127.0.0.1, port 0, plain HTTP, started (the caller destroys it). */
    public static KubernetesMockServer startCrudServer() throws IOException {
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init(InetAddress.getByName("127.0.0.1"), 0);
        return server;
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
