package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.InetAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
        api = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        api.init(InetAddress.getByName("127.0.0.1"), 0);
        KubernetesClient client = api.createClient();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();

        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.removeIf(arg -> arg.startsWith("--health-server-port="));
        args.addAll(List.of("--health-server-host=127.0.0.1", "--health-server-port=0",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client), "--enable-lock-controller",
                "--pod-field-selector=false"));
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
}
