package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.WebhookHttps;
import io.tenantgateway.agent.webhook.ClusterDeviceStateWatch;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.webhook.WebhookServer;
import io.tenantgateway.webhook.policy.ClusterDeviceState;
import io.tenantgateway.webhook.policy.DeviceConfig;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scheduler-side state (AWS Neuron cores per device, HAMi v2.9's Enflame factor) learnt from Node capacities in
 * fabric8's CRUD mock API: the standalone webhook with {@code --kubeconfig} decides with it at the next admission,
 * the watch follows added, changed and deleted Nodes by the smallest-name rule, and a watch that expires (410 Gone)
 * is listed again.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class WebhookClusterDeviceStateIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private static final String THREE_CORES = "{'metadata':{'name':'neuron'},'spec':{'containers':[{'name':'c',"
            + "'resources':{'limits':{'aws.amazon.com/neuroncore':'3'}}}]}}";

    private static Node node(String name, Map<String, String> capacity) {
        NodeBuilder node = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
        var status = node.withNewStatus();
        capacity.forEach((resource, value) -> status.addToCapacity(resource, new Quantity(value)));
        return status.endStatus().build();
    }

    private static void put(String name, Map<String, String> capacity) {
        client.nodes().resource(node(name, capacity)).createOr(existing -> existing.update());
    }

    @BeforeEach
    void noNodesAndNoRecordedRequests() throws InterruptedException {
        client.nodes().delete();
        while (server.takeRequest(10, TimeUnit.MILLISECONDS) != null) {
            // drained: a test counts only its own requests
        }
    }

    @Test
    void aNeuronNodeWithOneCorePerDeviceAllowsThreeCoresAtTheNextAdmission() throws Exception {
        put("cpu-0", Map.of("cpu", "8", "memory", "32Gi"));
        TestPki pki = TestPki.create("cluster-state");
        TestPki.Files files = pki.writeTo(dir);
        WebhookInBackground command = WebhookInBackground.start("--listen", "127.0.0.1:0",
                "--tls-cert", files.serverCert().toString(), "--tls-key", files.serverKey().toString(),
                "--kubeconfig", MockApiKubeconfig.write(dir, client).toString());
        WebhookServer started = command.started(30);
        WebhookHttps webhook = new WebhookHttps(pki);

        // No Neuron node: HAMi's default of 2 cores per device.
        WebhookHttps.Answer before = webhook.admitPod(started.port(), "team-n", THREE_CORES);
        assertThat(before.allowed()).isFalse();
        assertThat(before.response().path("status").path("code").asInt()).isEqualTo(500);
        assertThat(before.message()).isEqualTo("aws.amazon.com/neuroncore must be 1 or a multiple of 2, got 3");

        // A Neuron node with 2 devices of 1 core each appears: 3 cores are 3 devices.
        put("neuron-b", Map.of("aws.amazon.com/neuron", "2", "aws.amazon.com/neuroncore", "2"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            WebhookHttps.Answer after = webhook.admitPod(started.port(), "team-n", THREE_CORES);
            assertThat(after.allowed()).as(after.response().toString()).isTrue();
            assertThat(after.patch()).contains("\"/spec/schedulerName\"");
        });
        assertThat(started.clusterState()).isEqualTo(new ClusterDeviceState(1, 0));

        // A node with a smaller name and 2 cores per device decides; gone again, the other one does.
        put("neuron-a", Map.of("aws.amazon.com/neuron", "1", "aws.amazon.com/neuroncore", "2"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(webhook.admitPod(started.port(),
                "team-n", THREE_CORES).message()).isEqualTo("aws.amazon.com/neuroncore must be 1 or a multiple of 2,"
                        + " got 3"));
        client.nodes().withName("neuron-a").delete();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(webhook.admitPod(started.port(),
                "team-n", THREE_CORES).allowed()).isTrue());

        assertThat(command.stop()).as(command.err()).isZero();
    }

    @Test
    void theWatchFollowsNodesBySmallestNameAndTheConfiguredNeuronNames() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        List<ClusterDeviceState> seen = new CopyOnWriteArrayList<>();
        try (ClusterDeviceStateWatch watch = new ClusterDeviceStateWatch(client, DeviceConfig.defaults(), registry)) {
            watch.subscribe(seen::add);
            assertThat(seen).containsExactly(ClusterDeviceState.DEFAULTS);
            watch.start();
            assertThat(watch.listed()).isTrue();
            // Nodes appear after the list (the list itself: aWatchThatExpiresIsListedAgain). Enflame 16 / 2 = 8; the
            // Neuron node's names are not the configured ones (chart: aws.amazon.com). Put last, the Enflame node's
            // event also says the Neuron node's event was delivered: no event is on its way when the watch is
            // replaced below (fabric8's mock server stalls 30 s when a watch closes while it sends an event).
            put("neuron-x", Map.of("example.com/neuron", "4", "example.com/neuroncore", "4"));
            put("enflame-b", Map.of("enflame.com/gcu-count", "2", "enflame.com/shared-gcu", "16"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().equals(new ClusterDeviceState(2, 8)));
            assertThat(metrics(registry)).contains("tenant_gateway_webhook_enflame_shared_gcu_factor 8.0",
                    "tenant_gateway_webhook_neuron_cores_per_device 2.0");

            // HAMi's ConfigMap renames the Neuron resources: listed again with the new names (4 / 4 = 1).
            watch.deviceConfig(DeviceConfig.parse("awsneuron:\n  resourceCountName: example.com/neuron\n"
                    + "  resourceCoreName: example.com/neuroncore\n", "test"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().neuronCoresPerDevice() == 1);

            // A smaller name decides; one without shared-gcu counts 0, as HAMi's integer division does.
            put("enflame-a", Map.of("enflame.com/gcu-count", "4"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().enflameSharedFactor() == 0);
            put("enflame-a", Map.of("enflame.com/gcu-count", "4", "enflame.com/shared-gcu", "8"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().enflameSharedFactor() == 2);
            client.nodes().withName("enflame-a").delete();
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().enflameSharedFactor() == 8);
            assertThat(metrics(registry)).contains("tenant_gateway_webhook_enflame_shared_gcu_factor 8.0",
                    "tenant_gateway_webhook_neuron_cores_per_device 1.0");
            assertThat(seen).as("each change handed on once, in order").containsExactly(
                    ClusterDeviceState.DEFAULTS, new ClusterDeviceState(2, 8), new ClusterDeviceState(1, 8),
                    new ClusterDeviceState(1, 0), new ClusterDeviceState(1, 2), new ClusterDeviceState(1, 8));
        }
        assertThat(metrics(registry)).doesNotContain("tenant_gateway_webhook_neuron_cores_per_device");
    }

    @Test
    void aWatchThatExpiresIsListedAgain() throws Exception {
        put("enflame-b", Map.of("enflame.com/gcu-count", "2", "enflame.com/shared-gcu", "4"));
        String version = client.nodes().list().getMetadata().getResourceVersion();
        // The API ends the watch from this version at once: 410 Gone, as after etcd compaction.
        server.expect().get().withPath("/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=" + version
                + "&watch=true").andUpgradeToWebSocket().open().waitFor(10).andEmit(new WatchEvent(
                        new StatusBuilder().withCode(410).withReason("Expired").withMessage("too old resource version")
                                .build(), "ERROR")).done().once();
        try (ClusterDeviceStateWatch watch = new ClusterDeviceStateWatch(client, DeviceConfig.defaults(),
                new PrometheusRegistry())) {
            watch.start();
            assertThat(watch.current().enflameSharedFactor()).isEqualTo(2);
            // Learnt only by the list after the expired watch (and the watch from there).
            put("enflame-a", Map.of("enflame.com/gcu-count", "1", "enflame.com/shared-gcu", "8"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().enflameSharedFactor() == 8);
            // The new watch's first events (the mock server sends every Node as ADDED) are delivered before this
            // one's: none is on its way when the watch closes (see above).
            put("enflame-0", Map.of("enflame.com/gcu-count", "1", "enflame.com/shared-gcu", "3"));
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.current().enflameSharedFactor() == 3);
        }
        List<String> paths = new ArrayList<>();
        RecordedRequest request;
        while ((request = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
            paths.add(request.getPath());
        }
        assertThat(paths.stream().filter(path -> path.startsWith("/api/v1/nodes?limit=")).count())
                .as("lists in %s", paths).isEqualTo(2);
    }

    private static String metrics(PrometheusRegistry registry) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }
}
