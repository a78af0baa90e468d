package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The agent with every HAMi part on, against the Java konnectivity-server and fabric8's mock API server (CRUD):
 * {@code /readyz} is 503 naming the failing check until every enabled part is ready, then 200; draining turns it
 * back to 503. Every API call the agent made is one the ClusterRole grants.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class AgentReadinessIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    @AutoClose
    private TunnelTestbed testbed;
    @AutoClose
    private Agent agent;
    private final HttpClient http = HttpClient.newHttpClient();


    private HttpResponse<String> readyz(String query) throws Exception {
        int port = agent.health().orElseThrow().boundPort();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz" + query)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readyOnlyWhenEveryEnabledPartIsReady() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--node-name=worker-1", "--device-source=mock", "--monitor-listen=127.0.0.1:0", "--mock-gpus=A100-80GB",
                "--handshake-interval=2s", "--webhook-tls-cert=" + testbed.files.serverCert(),
                "--webhook-tls-key=" + testbed.files.serverKey(), "--webhook-listen=127.0.0.1:0",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client)));
        AgentCommand command = new AgentCommand();
        new CommandLine(command).parseArgs(args.toArray(String[]::new));
        ApiCalls.drain(server);

        agent = new Agent(command.toConfig(), Clock.systemUTC());
        agent.start();

        // The node does not exist yet: devices cannot be registered, everything else comes up.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> response = readyz("?verbose");
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(response.body()).contains("[+]server-connected ok", "[+]webhook-serving ok",
                    "[+]lock-controller-synced ok", "[-]devices-registered failed: ", "readyz check failed");
        });

        try (KubernetesClient harness = ApiCalls.testClient(client)) {
            harness.nodes().resource(new NodeBuilder().withNewMetadata().withName("worker-1").endMetadata().build())
                    .create();
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> response = readyz("");
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("ok");
        });
        assertThat(readyz("?verbose").body().lines().toList()).containsExactly("[+]shutdown ok",
                "[+]server-connected ok", "[+]devices-registered ok", "[+]lock-controller-synced ok",
                "[+]webhook-serving ok", "[+]webhook-quota-synced ok", "[+]webhook-device-config ok",
                "[+]monitor ok (0 container(s) read, 0 from annotations only)", "readyz check passed");

        assertThat(agent.drain(Instant.now().plusSeconds(5))).isTrue();
        HttpResponse<String> draining = readyz("");
        assertThat(draining.statusCode()).isEqualTo(503);
        assertThat(draining.body()).contains("[-]shutdown failed: draining", "[-]webhook-serving failed: draining");

        Set<String> calls = ApiCalls.drain(server);
        assertThat(calls).as("API calls the agent made").isNotEmpty()
                .contains("core/nodes:patch", "core/nodes/status:patch", "core/pods:watch");
        assertThat(KubernetesPermissions.keys()).as("ClusterRole grants every call made").containsAll(calls);
    }
}
