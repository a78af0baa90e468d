package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.main.Main;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.hami.Annotations;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node role as the built jar: {@code run --tunnel=false} with simulated GPUs against fabric8's mock API server
 * (CRUD) and the kubelet stand-in, and no konnectivity-server anywhere. It registers the GPUs (the node's register
 * annotation) and its device plugin, {@code /readyz} passes without {@code server-connected}, the health and admin
 * servers answer, its start line, {@code /debug/config} and {@code doctor} say the tunnel is off, and SIGTERM ends it
 * with exit 0.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class NodeRoleIT {
    private static final String NODE = "worker-1";

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private Path plugins;

    @BeforeEach
    void start() throws Exception {
        plugins = Files.createDirectories(dir.resolve("dp"));
        cleanup.add(KubeletStandIn.start(plugins));
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
        client.nodes().withName(NODE).delete();
    }

    /** The chart's node DaemonSet's flags, with test ports, files and the mock API. */
    private List<String> args() throws Exception {
        return List.of("--tunnel=false", "--node-name=" + NODE, "--health-server-port=0", "--admin-server-port=0",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client), "--device-source=mock",
                "--monitor-listen=127.0.0.1:0", "--mock-gpus=L4-24GB:2", "--handshake-interval=2s",
                "--device-plugin=true",
                "--device-plugin-dir=" + plugins,
                "--device-plugin-host-root=" + Files.createDirectories(dir.resolve("host")),
                "--pod-field-selector=false");
    }

    @Test
    void registersTheNodesGpusAndIsReadyWithoutAKonnectivityServer() throws Exception {
        AgentProcess agent = AgentProcess.start(args());
        cleanup.add(agent);
        int health = agent.healthPort();
        int admin = agent.adminPort();

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
            assertThat(LoopbackHttp.get(health, "/readyz?verbose").body()).contains("[+]shutdown ok",
                    "[+]devices-registered ok", "[+]device-plugin-registered ok", "[+]lock-controller-synced ok",
                    "readyz check passed");
        });
        assertThat(LoopbackHttp.get(health, "/readyz?verbose").body()).doesNotContain("server-connected");
        assertThat(LoopbackHttp.status(health, "/healthz")).isEqualTo(200);
        String register = Annotations.get(client.nodes().withName(NODE).get().getMetadata().getAnnotations(),
                Annotations.NODE_NVIDIA_REGISTER);
        assertThat(register).contains("\"type\":\"NVIDIA L4\"", "\"count\":10");

        // What the agent says about itself: the tunnel is off, everywhere.
        assertThat(agent.lines("starting tenant-gateway")).singleElement().asString().contains("tunnel=off")
                .doesNotContain("proxy-server-host");
        assertThat(agent.lines("tunnel off (--tunnel=false)")).singleElement().asString()
                .contains("parts=\"devices,device-plugin,lock-controller,monitor\"");
        assertThat(agent.lines("tenant-gateway started")).singleElement().asString()
                .contains("parts=\"devices,device-plugin,lock-controller,monitor\"", "tunnel=\"off\"");
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).contains("\"tunnel\" : \"off\"")
                .doesNotContain("proxy-server-host");
        assertThat(LoopbackHttp.get(admin, "/debug/tunnels").body()).contains("\"enabled\" : false");
        assertThat(LoopbackHttp.get(admin, "/ui").body()).contains("tunnel off (--tunnel=false)");

        // doctor with the same flags: the tunnel's checks are skipped, not failed.
        StringWriter out = new StringWriter();
        List<String> doctor = new ArrayList<>(List.of("doctor"));
        doctor.addAll(args());
        Main.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), doctor.toArray(String[]::new));
        assertThat(out.toString()).contains("doctor: agent ", " on node " + NODE + ", tunnel off",
                "flags valid; parts: devices, device-plugin, lock-controller, monitor")
                .containsPattern("SKIP +ca-cert +tunnel off \\(--tunnel=false\\)")
                .containsPattern("SKIP +grpc-connect +tunnel off \\(--tunnel=false\\)");

        agent.signal("TERM");
        assertThat(agent.awaitExit(Duration.ofSeconds(60))).isZero();
        assertThat(agent.lines("tenant-gateway stopped")).isNotEmpty();
    }
}
