package io.tenantgateway.agent.monitor;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.region.SimulatedRegion;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The vGPU monitor in a running agent against fabric8's CRUD mock API: a container's HAMi-core region (written in the
 * real layout) appears with HAMi's metric names and labels on the agent's {@code /metrics} and on the HAMi-compatible
 * listener; a container without a region yet shows its limits from the pod's allocation annotation; the cache
 * directory of a deleted pod goes after the grace while a live pod's stays; with the API unreachable nothing goes.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class MonitorIT {
    private static final String NODE = "worker-1";
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    @AutoClose
    private TunnelTestbed testbed;
    @AutoClose
    private Agent agent;
    private final HttpClient http = HttpClient.newHttpClient();

    private Path containers() {
        return dir.resolve("host/usr/local/vgpu/containers");
    }

    private Agent start(String kubeconfigUrl, String grace) throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--node-name=" + NODE, "--device-source=mock", "--mock-gpus=A100-80GB",
                "--handshake-interval=2s", "--pod-field-selector=false",
                "--device-plugin-host-root=" + dir.resolve("host"), "--monitor-listen=127.0.0.1:0",
                "--monitor-scan-interval=200ms", "--monitor-cache-grace=" + grace,
                "--kubeconfig=" + (kubeconfigUrl == null ? MockApiKubeconfig.write(dir, client)
                        : MockApiKubeconfig.write(dir, kubeconfigUrl))));
        AgentCommand command = new AgentCommand();
        new CommandLine(command).parseArgs(args.toArray(String[]::new));
        Agent started = new Agent(command.toConfig(), Clock.systemUTC());
        started.start();
        return started;
    }

    private static Pod pod(String name, String allocated, String... containers) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace("team-a")
                .addToAnnotations(Annotations.POD_DEVICES_ALLOCATED, allocated).endMetadata()
                .withNewSpec().withNodeName(NODE).endSpec();
        for (String container : containers) {
            pod.editSpec().addNewContainer().withName(container).withImage("cuda").endContainer().endSpec();
        }
        return client.pods().inNamespace("team-a").resource(pod.build()).create();
    }

    private String scrape(int port) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    private String get(int port, String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + path)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(path).isEqualTo(200);
        return response.body();
    }

    /** Each sample of a Prometheus text exposition: name → (sorted labels → value). */
    private static Map<String, Map<Map<String, String>, Double>> samples(String text) {
        Map<String, Map<Map<String, String>, Double>> out = new TreeMap<>();
        for (String line : text.lines().toList()) {
            Matcher sample = SAMPLE.matcher(line);
            if (line.startsWith("#") || !sample.matches()) {
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            if (sample.group(3) != null) {
                Matcher label = LABEL.matcher(sample.group(3));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            out.computeIfAbsent(sample.group(1), name -> new LinkedHashMap<>()).put(labels,
                    Double.parseDouble(sample.group(4)));
        }
        return out;
    }

    private static Map<String, String> labels(String... keyValues) {
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            out.put(keyValues[i], keyValues[i + 1]);
        }
        return out;
    }

    @Test
    void usageFromRegionsAndLimitsFromAnnotationsWithHamisNamesAndLabelsThenTheGoneDirectoryIsRemoved()
            throws Exception {
        agent = start(null, "2s");
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        String gpuA = "GPU-aaaaaaaa-1111-2222-3333-444444444444-and-a-long-tail";
        Pod withRegion = pod("trainer", gpuA + ",NVIDIA,10240,30:;;", "cuda", "sidecar");
        Pod annotationOnly = pod("notebook", "GPU-b,NVIDIA,4096,0:;", "jupyter");
        Path trainerDir = containers().resolve(withRegion.getMetadata().getUid() + "_cuda");
        long lastKernel = System.currentTimeMillis() / 1000 - 5;
        SimulatedRegion.write(trainerDir.resolve("6f0c.cache"), 77, List.of(new SimulatedRegion.Device(gpuA,
                10240L << 20, 30, 3L << 30, 42)), lastKernel);
        Path notebookDir = Files.createDirectories(containers().resolve(annotationOnly.getMetadata().getUid()
                + "_jupyter"));

        int health = agent.health().orElseThrow().boundPort();
        int listener = ((MonitorPart) agent.part(MonitorPart.NAME).orElseThrow()).listening().orElseThrow().getPort();
        Map<String, String> current = labels("namespace", "team-a", "pod", "trainer", "container", "cuda",
                "vdevice_index", "0", "device_uuid", gpuA.substring(0, 40));
        Map<String, String> legacy = labels("podnamespace", "team-a", "podname", "trainer", "ctrname", "cuda",
                "vdeviceid", "0", "deviceuuid", gpuA.substring(0, 40));
        await().atMost(WAIT).untilAsserted(() -> assertThat(samples(scrape(health)))
                .containsKey("hami_vgpu_memory_used_bytes").containsKey("vGPU_device_memory_limit_in_bytes"));

        for (int port : new int[] {health, listener}) {
            Map<String, Map<Map<String, String>, Double>> samples = samples(scrape(port));
            assertThat(samples.get("hami_vgpu_memory_used_bytes")).containsExactly(Map.entry(current, 3.0 * (1L << 30)));
            assertThat(samples.get("hami_container_device_memory_bytes")).containsExactly(
                    Map.entry(current, 3.0 * (1L << 30)));
            assertThat(samples.get("hami_container_device_utilization_ratio")).containsExactly(
                    Map.entry(current, 42.0));
            assertThat(samples.get("hami_vgpu_memory_context_bytes")).containsExactly(
                    Map.entry(current, (double) ((3L << 30) / 8)));
            assertThat(samples.get("hami_vgpu_memory_module_bytes")).containsExactly(
                    Map.entry(current, (double) ((3L << 30) / 8)));
            assertThat(samples.get("hami_vgpu_memory_buffer_bytes")).containsExactly(
                    Map.entry(current, (double) ((3L << 30) - 2 * ((3L << 30) / 8))));
            assertThat(samples.get("hami_container_last_kernel_elapsed_seconds").get(current)).isBetween(4.0, 120.0);
            assertThat(samples.get("hami_vgpu_memory_limit_bytes")).containsOnly(
                    Map.entry(with(current, "limit_source", "region"), (double) (10240L << 20)),
                    Map.entry(labels("namespace", "team-a", "pod", "notebook", "container", "jupyter",
                            "vdevice_index", "0", "device_uuid", "GPU-b", "limit_source", "annotation"),
                            (double) (4096L << 20)));
            assertThat(samples.get("vGPU_device_memory_usage_in_bytes")).containsExactly(
                    Map.entry(legacy, 3.0 * (1L << 30)));
            assertThat(samples.get("vGPU_device_memory_limit_in_bytes")).containsOnly(
                    Map.entry(with(legacy, "limit_source", "region"), (double) (10240L << 20)),
                    Map.entry(labels("podnamespace", "team-a", "podname", "notebook", "ctrname", "jupyter",
                            "vdeviceid", "0", "deviceuuid", "GPU-b", "limit_source", "annotation"),
                            (double) (4096L << 20)));
            Map<String, String> desc = with(with(with(with(legacy, "context", Long.toString((3L << 30) / 8)),
                    "module", Long.toString((3L << 30) / 8)), "data",
                    Long.toString((3L << 30) - 2 * ((3L << 30) / 8))), "offset", "0");
            assertThat(samples.get("Device_memory_desc_of_container")).containsExactly(
                    Map.entry(desc, 3.0 * (1L << 30)));
            assertThat(samples.get("Device_utilization_desc_of_container")).containsExactly(Map.entry(legacy, 42.0));
            assertThat(samples.get("Device_last_kernel_of_container").keySet()).containsExactly(legacy);
        }
        assertThat(samples(scrape(listener)).keySet()).as("the HAMi listener has HAMi's families only")
                .allMatch(name -> name.startsWith("hami_") || name.startsWith("vGPU_")
                        || name.startsWith("Device_"));
        assertThat(samples(scrape(health)).get("tenant_gateway_monitor_containers")).containsOnly(
                Map.entry(labels("limit_source", "region"), 1.0), Map.entry(labels("limit_source", "annotation"),
                        1.0));

        // The status page and /debug/monitor show each container's usage against its limits.
        int admin = agent.admin().orElseThrow().boundPort();
        String page = get(admin, "/ui");
        assertThat(page).contains("<section id=\"monitor\"><h2>GPU containers</h2>")
                .contains("<td data-label=\"pod\">team-a/trainer</td><td data-label=\"container\">cuda</td>")
                .contains("<td data-label=\"used\">3072 MiB</td><td data-label=\"limit\">10240 MiB</td>"
                        + "<td data-label=\"sm\">42 %</td><td data-label=\"sm-limit\">30 %</td>"
                        + "<td data-label=\"source\">HAMi-core</td>")
                .contains("<td data-label=\"pod\">team-a/notebook</td>")
                .contains("<td data-label=\"used\">-</td><td data-label=\"limit\">4096 MiB</td>")
                .contains("annotation (no CUDA call yet)");
        assertThat(get(admin, "/debug/monitor")).contains("\"pod\" : \"trainer\"",
                "\"memoryUsedBytes\" : 3221225472", "\"source\" : \"annotation\"");

        // The trainer pod goes: its directory is removed once the grace (2 s) has passed; the notebook's stays.
        client.pods().inNamespace("team-a").withName("trainer").delete();
        await().atMost(WAIT).until(() -> !Files.exists(trainerDir));
        assertThat(notebookDir).isDirectory();
        assertThat(samples(scrape(health)).get("tenant_gateway_monitor_cache_directories_removed_total"))
                .containsValue(1.0);
        assertThat(samples(scrape(health))).doesNotContainKey("hami_vgpu_memory_used_bytes");
    }

    @Test
    void withTheApiUnreachableNoDirectoryIsRemoved() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        Path orphan = Files.createDirectories(containers().resolve("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee_cuda"));
        agent = start("http://127.0.0.1:" + closed, "0s");
        int health = agent.health().orElseThrow().boundPort();
        await().atMost(WAIT).untilAsserted(() -> assertThat(samples(scrape(health))
                .get("tenant_gateway_monitor_scans_total").values()).allMatch(scans -> scans >= 5));
        assertThat(orphan).isDirectory();
        assertThat(samples(scrape(health)).get("tenant_gateway_monitor_cache_directories_waiting"))
                .containsValue(0.0);
        MonitorSnapshot snapshot = ((MonitorPart) agent.part(MonitorPart.NAME).orElseThrow()).snapshot();
        assertThat(snapshot.podsError()).isPresent();
        assertThat(snapshot.directories()).isEqualTo(1);
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> out = new TreeMap<>(labels);
        out.put(key, value);
        return out;
    }
}
