package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.Quantities;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.hami.Annotations;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --report-node-capacity} with simulated GPUs against fabric8's mock API server (CRUD): the agent, its flags
 * parsed by the real CLI, patches its Node's status capacity and allocatable with the healthy GPUs' totals under HAMi's
 * names, and nothing there without the flag. Every API call it made is one its ClusterRole (the permissions its flags
 * use) grants.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class NodeCapacityIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    @AutoClose
    private TunnelTestbed testbed;
    @AutoClose
    private Agent agent;
    private AgentConfig config;

    /** Starts the agent for {@code node} (created first, with the kubelet's cpu) with the tunnel's and these flags. */
    private void start(String node, String... flags) throws Exception {
        try (KubernetesClient harness = ApiCalls.testClient(client)) {
            harness.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().withNewStatus()
                    .addToCapacity("cpu", new Quantity("16")).addToAllocatable("cpu", new Quantity("15")).endStatus()
                    .build()).create();
        }
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--node-name=" + node, "--enable-lock-controller=false", "--handshake-interval=1s",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client)));
        args.addAll(List.of(flags));
        config = AgentCommand.parse(args.toArray(String[]::new)).toConfig();
        ApiCalls.drain(server);
        agent = new Agent(config, Clock.systemUTC());
        agent.start();
    }

    private static Node node(String name) {
        return client.nodes().withName(name).get();
    }

    /** The calls the agent made since the start, each one the permissions its flags use grant. */
    private Set<String> callsGranted() throws InterruptedException {
        Set<String> calls = ApiCalls.drain(server);
        assertThat(KubernetesPermissions.keys(KubernetesPermissions.needed(config.apiUses(false))))
                .as("the ClusterRole for these flags grants every call made").containsAll(calls);
        return calls;
    }

    @Test
    void mockGpusTotalsAreReportedInCapacityAndAllocatable() throws Exception {
        start("worker-1", "--device-source=mock", "--mock-gpus=L4-24GB:2", "--advertise-gpu-capacity=false",
                "--report-node-capacity");

        // 2 × L4: 2 × 23034 MiB, 2 × 100 %; the kubelet's cpu stays.
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(Quantities.present(node("worker-1").getStatus().getCapacity())).isEqualTo(Map.of("cpu", "16",
                    "nvidia.com/gpumem", "46068", "nvidia.com/gpucores", "200"));
            assertThat(Quantities.present(node("worker-1").getStatus().getAllocatable())).isEqualTo(Map.of("cpu", "15",
                    "nvidia.com/gpumem", "46068", "nvidia.com/gpucores", "200"));
        });
        assertThat(config.apiUses(false)).contains(Use.NODE_CAPACITY).doesNotContain(Use.GPU_CAPACITY);
        assertThat(callsGranted()).contains("core/nodes:patch", "core/nodes/status:patch");
    }

    @Test
    void anUnhealthyGpuOfTheInventoryIsLeftOut() throws Exception {
        Path inventory = Files.writeString(dir.resolve("inventory.yaml"), """
                devices:
                  - preset: A100-80GB
                  - preset: L4-24GB
                    healthy: false
                """);
        start("worker-2", "--device-source=mock", "--mock-inventory=" + inventory, "--advertise-gpu-capacity=false",
                "--report-node-capacity=true");

        await().atMost(WAIT).untilAsserted(() -> assertThat(Quantities.present(node("worker-2").getStatus().getAllocatable()))
                .isEqualTo(Map.of("cpu", "15", "nvidia.com/gpumem", "81920", "nvidia.com/gpucores", "100")));
        assertThat(Quantities.present(node("worker-2").getStatus().getCapacity())).containsEntry("nvidia.com/gpumem", "81920")
                .containsEntry("nvidia.com/gpucores", "100");
    }

    @Test
    void offByDefaultNothingIsPatchedInTheStatus() throws Exception {
        // Mock mode's own capacity (--advertise-gpu-capacity, on by default there) is off: it writes status too.
        start("worker-3", "--device-source=mock", "--mock-gpus=L4-24GB:2", "--advertise-gpu-capacity=false");

        // Registered, then at least one more round (the handshake, every second, changes its stamp).
        await().atMost(WAIT).until(() -> Annotations.get(node("worker-3").getMetadata().getAnnotations(),
                Annotations.NODE_HANDSHAKE) != null);
        String first = Annotations.get(node("worker-3").getMetadata().getAnnotations(), Annotations.NODE_HANDSHAKE);
        await().atMost(WAIT).until(() -> !first.equals(Annotations.get(node("worker-3").getMetadata()
                .getAnnotations(), Annotations.NODE_HANDSHAKE)));

        assertThat(Annotations.get(node("worker-3").getMetadata().getAnnotations(),
                Annotations.NODE_NVIDIA_REGISTER)).isNotNull();
        assertThat(Quantities.present(node("worker-3").getStatus().getCapacity())).isEqualTo(Map.of("cpu", "16"));
        assertThat(Quantities.present(node("worker-3").getStatus().getAllocatable())).isEqualTo(Map.of("cpu", "15"));
        assertThat(config.apiUses(false)).doesNotContain(Use.NODE_CAPACITY, Use.GPU_CAPACITY);
        assertThat(callsGranted()).contains("core/nodes:patch").doesNotContain("core/nodes/status:patch");
    }
}
