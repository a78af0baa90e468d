package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Kamaji's DaemonSet sets no {@code NODE_NAME}: {@code run} with the lock controller reads the node name from its
 * own pod through the API (fabric8's CRUD mock server). Before the pod is there, readiness names the pending node
 * identity and the status page (its HAMi registrations too), {@code /debug/config} and the config log line say it
 * is being discovered; once the pod exists, all three show the discovered name. None of them ever shows the placeholder the flags were checked
 * with ({@code node-name-pending}).
 */
@Timeout(60)
class NodeIdentityIT extends AgentProcessTestBase {
    private static final String NODE = "gpu-node-7";
    private static final String POD = "konnectivity-agent-q4r8z";
    private static final String NAMESPACE = "kube-system";

    @AutoClose("destroy")
    private KubernetesMockServer api;

    @Test
    void statusPageDebugConfigAndConfigLineShowTheNodeDiscoveredFromThePod() throws Exception {
        testbed = new TunnelTestbed(dir);
        api = MockApiKubeconfig.startCrudServer();
        KubernetesClient client = api.createClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();

        List<String> args = new ArrayList<>(testbed.kamajiArgs(MockApiKubeconfig.write(dir, client)));
        args.addAll(List.of("--enable-lock-controller", "--pod-field-selector=false"));
        agent = AgentProcess.launch(args, Map.of("NODE_NAME", "", "POD_NAME", POD, "POD_NAMESPACE", NAMESPACE));
        int health = agent.healthPort();
        int admin = agent.adminPort();

        // The pod does not exist yet: readiness names the pending identity, the views say where it comes from.
        String pending = "<discovering from pod " + NAMESPACE + "/" + POD + ">";
        await().atMost(WAIT).untilAsserted(() -> {
            HttpResponse<String> readyz = LoopbackHttp.get(health, "/readyz?verbose");
            assertThat(readyz.statusCode()).isEqualTo(503);
            assertThat(readyz.body()).contains("[-]node-identity failed: being discovered from pod " + NAMESPACE
                    + "/" + POD + " (spec.nodeName) through the API: ")
                    .contains("[-]lock-controller-synced failed: node name unknown: ");
        });
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).contains("\"node-name\" : \"" + pending + "\"");
        assertThat(LoopbackHttp.get(admin, "/ui").body()).contains("<h2>HAMi registrations</h2><p class=\"off\">node"
                + " name not known yet (&lt;discovering from pod " + NAMESPACE + "/" + POD + "&gt;)</p>");
        assertThat(agent.lines("starting tenant-gateway")).singleElement().asString()
                .contains("node-name=" + pending);

        client.pods().inNamespace(NAMESPACE).resource(new PodBuilder().withNewMetadata().withName(POD)
                .withNamespace(NAMESPACE).endMetadata().withNewSpec().withNodeName(NODE).endSpec().build()).create();

        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
            HttpResponse<String> readyz = LoopbackHttp.get(health, "/readyz?verbose");
            assertThat(readyz.body()).contains("[+]node-identity ok").contains("[+]lock-controller-synced ok")
                    .doesNotContain("[-]");
            assertThat(readyz.statusCode()).isEqualTo(200);
        });
        assertThat(LoopbackHttp.get(admin, "/ui").body()).contains("<b id=\"node\">" + NODE + "</b>",
                "node " + NODE + " as HAMi v2.10's scheduler reads it, from the lock controller&#39;s node informer",
                "no HAMi registration on this node");
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).contains("\"node-name\" : \"" + NODE + "\"");
        assertThat(agent.lines("node name discovered from this pod's spec.nodeName: " + NODE)).hasSize(1);
        assertThat(agent.lines("tenant-gateway config with the discovered node name")).singleElement()
                .asString().contains("node-name=" + NODE);
        assertThat(LoopbackHttp.get(admin, "/debug/locks").statusCode()).isEqualTo(200);
        assertThat(agent.lines(AgentCommand.PENDING_NODE_NAME)).as("the placeholder is never shown").isEmpty();
        assertThat(LoopbackHttp.get(admin, "/ui").body()).doesNotContain(AgentCommand.PENDING_NODE_NAME);
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).doesNotContain(AgentCommand.PENDING_NODE_NAME);
    }

    /**
     * A pod whose {@code spec.nodeName} carries a line feed, a forged klog header and terminal escapes (the CRUD mock
     * stores what a real API server refuses): the agent stays up with its tunnel (it used to exit 2 when device
     * registration checked the name), {@code node-identity} fails naming the name quoted, the lock controller and
     * device registration wait for it, and no raw control character reaches the agent's log.
     */
    @Test
    void aHostileNodeNameFailsNodeIdentityAndLeavesTheTunnelUp() throws Exception {
        testbed = new TunnelTestbed(dir);
        api = MockApiKubeconfig.startCrudServer();
        KubernetesClient client = api.createClient();
        String hostile = NODE + "\nI1201 07:09:36.000000       1 Forged.java:1] \"node name accepted\"\r\u001b[2J"
                + "\u001b]52;c;aGk=\u0007";
        client.pods().inNamespace(NAMESPACE).resource(new PodBuilder().withNewMetadata().withName(POD)
                .withNamespace(NAMESPACE).endMetadata().withNewSpec().withNodeName(hostile).endSpec().build()).create();

        List<String> args = new ArrayList<>(testbed.kamajiArgs(MockApiKubeconfig.write(dir, client)));
        args.addAll(List.of(TunnelTestbed.DIAL_LOOPBACK, "--enable-lock-controller", "--device-source=mock", "--monitor-listen=127.0.0.1:0",
                "--mock-gpus=L4-24GB:1", "--pod-field-selector=false"));
        agent = AgentProcess.launch(args, Map.of("NODE_NAME", "", "POD_NAME", POD, "POD_NAMESPACE", NAMESPACE));
        int health = agent.healthPort();

        String quoted = "\"" + NODE + "\\nI1201 07:09:36.000000       1 Forged.java:1] \\\"node name accepted\\\"\\r"
                + "\\x1b[2J\\x1b]52;c;aGk=\\a\"";
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            HttpResponse<String> readyz = LoopbackHttp.get(health, "/readyz?verbose");
            assertThat(readyz.statusCode()).isEqualTo(503);
            assertThat(readyz.body()).contains("[-]node-identity failed: being discovered from pod " + NAMESPACE + "/"
                    + POD + " (spec.nodeName) through the API: ", "pod " + NAMESPACE + "/" + POD
                    + " has spec.nodeName " + quoted + " (expected: a lower-case RFC 1123 subdomain")
                    .contains("[-]lock-controller-synced failed: node name unknown: ", "[+]server-connected ok")
                    .containsPattern("\\[-]devices-[a-z-]+ failed: node name unknown: ");
        });
        assertThat(testbed.server.agentCount()).isEqualTo(1);
        // The tunnel serves while the name is refused.
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("node name refused, tunnel up")).isEqualTo("node name refused, tunnel up");
        }
        assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
        assertThat(agent.lines("has spec.nodeName").stream().filter(line -> line.startsWith("W")))
                .as("said once at WARN (retries at DEBUG)").singleElement().asString().contains(quoted.replace("\\", "\\\\").replace("\"", "\\\""));
        for (String line : agent.log) {
            assertThat(line).as("no raw control character in the log").doesNotContain("\u001b", "\u0007", "\r");
            assertThat(line).as("no forged line").doesNotStartWith("I1201 07:09:36.000000       1 Forged.java");
        }
        assertThat(agent.lines("node name discovered")).isEmpty();
    }
}
