package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sizes no real cluster has, against the built agent started as the image starts it ({@code bin/tenant-gateway run},
 * its heap bounds): a simulated device count past the cap is a configuration error (exit 2, one line), and a register
 * annotation of 8 MiB on the agent's Node (a real API server caps all annotations of an object at 256 KiB; fabric8's
 * CRUD mock stores anything) is not decoded, and a Node too large for any API answer is not read: the agent stays
 * up, its tunnel serves, the status page or the readiness check names the size and the limit.
 */
@Timeout(120)
class HostileSizesIT extends AgentProcessTestBase {
    private static final String NODE = "gpu-node-7";
    private static final String FOREIGN_KEY = "hami.io/node-register-Ascend910B3";

    @AutoClose("destroy")
    private KubernetesMockServer api;

    @Test
    void aSimulatedDeviceCountPastTheCapExitsTwoWithOneLine() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--node-name=" + NODE, "--device-source=mock", "--monitor-listen=127.0.0.1:0", "--mock-devices=Ascend910B4:100000"));
        agent = AgentProcess.launch(args);

        assertThat(agent.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
        assertThat(agent.log).as("one line, no stack trace").containsExactly("error: --mock-devices:"
                + " Ascend910B4:100000 (expected: PRESET[:N] with N from 1 to 64, e.g. Ascend910B4:2; at most 256"
                + " simulated devices in all)");
    }

    /**
     * 1 MiB: more than the API allows, little enough to read. Not decoded; the status page names its size; one WARN
     * line; registration and the lock controller go on.
     */
    @Test
    void aRegisterAnnotationLargerThanTheApiAllowsIsNotDecoded() throws Exception {
        int size = startAgainstANodeWith(1024 * 1024);

        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
            assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
            assertThat(LoopbackHttp.get(health, "/readyz?verbose").body()).contains("[+]server-connected ok",
                    "[+]devices-registered ok", "[+]lock-controller-synced ok");
        });
        assertTunnelServes();
        String expected = "annotation " + FOREIGN_KEY + ": " + size + " bytes (expected: at most 262144,"
                + " Kubernetes&#39; limit on all annotations of an object); not decoded";
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(LoopbackHttp.get(admin, "/ui").body())
                .contains(expected));
        LoopbackHttp.get(admin, "/ui"); // read again: said once
        assertThat(agent.lines(FOREIGN_KEY + ": " + size + " bytes")).as("one WARN line; log:%n%s",
                String.join("\n", agent.log)).singleElement().asString().startsWith("W").hasSizeLessThan(1024);
        assertThat(agent.log).allSatisfy(line -> assertThat(line).hasSizeLessThan(20_000));
    }

    /**
     * 8 MiB: the Node itself is larger than any answer the agent reads (it ran the agent out of heap inside the
     * Kubernetes client). The agent stays up and its tunnel serves; the parts that read the Node fail their checks
     * naming the limit, and retry.
     */
    @Test
    void aNodeLargerThanAnyApiAnswerFailsItsReadersNotTheAgent() throws Exception {
        startAgainstANodeWith(8 * 1024 * 1024);

        await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
            assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
            assertThat(LoopbackHttp.get(health, "/readyz?verbose").body()).contains("[+]server-connected ok")
                    .containsPattern("\\[-]devices-registered failed: .*/api/v1/nodes/" + NODE + ": the answer is"
                            + " over 4194304 bytes \\(expected: at most 4194304");
        });
        assertTunnelServes();
        assertThat(agent.process.isAlive()).isTrue();
        assertThat(agent.log).allSatisfy(line -> assertThat(line).hasSizeLessThan(20_000)
                .doesNotContain("OutOfMemoryError"));
    }

    private int health;
    private int admin;

    /** The agent (devices, lock controller) against a Node with a foreign register annotation of about {@code bytes}. */
    private int startAgainstANodeWith(int bytes) throws Exception {
        testbed = new TunnelTestbed(dir);
        api = MockApiKubeconfig.startCrudServer();
        KubernetesClient client = api.createClient();
        StringBuilder value = new StringBuilder(bytes + 64);
        for (int i = 0; value.length() < bytes; i++) {
            value.append("NPU-").append(i).append(",4,32768,20,Ascend910B3,0,true,").append(i).append(",:");
        }
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .withAnnotations(Map.of(FOREIGN_KEY, value.toString())).endMetadata().build()).create();

        List<String> args = new ArrayList<>(testbed.kamajiArgs(MockApiKubeconfig.write(dir, client)));
        args.addAll(List.of(TunnelTestbed.DIAL_LOOPBACK, "--node-name=" + NODE, "--device-source=mock", "--monitor-listen=127.0.0.1:0",
                "--mock-gpus=L4-24GB:1", "--enable-lock-controller", "--pod-field-selector=false"));
        agent = AgentProcess.launch(args);
        health = agent.healthPort();
        admin = agent.adminPort();
        return value.length();
    }

    private void assertTunnelServes() throws Exception {
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("tunnel up")).isEqualTo("tunnel up");
        }
    }
}
