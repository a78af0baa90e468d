package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.main.Main;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.deviceplugin.testing.ForeignDevicePlugin;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn.ContainerRequest;
import io.tenantgateway.hami.Annotations;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tenant-gateway run --device-plugin=true} as the built jar, against the kubelet stand-in (real Unix sockets)
 * and fabric8's mock API server (CRUD): it registers, {@code /readyz} includes the plugin, and kubelet's Allocate
 * completes a HAMi allocation; with another plugin on the socket it does not start, says why in its log, writes no
 * register annotation, and {@code doctor} with the same flags names the cause and the fix.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class DevicePluginRunIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private TunnelTestbed testbed;
    private KubeletStandIn kubelet;
    private Path plugins;
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        testbed = new TunnelTestbed(dir);
        cleanup.add(testbed);
        plugins = Files.createDirectories(dir.resolve("dp"));
        kubelet = KubeletStandIn.start(plugins);
        cleanup.add(kubelet);
        if (client.nodes().withName("worker-1").get() == null) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("worker-1").endMetadata().build())
                    .create();
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
        client.nodes().withName("worker-1").delete();
    }

    private List<String> args() throws Exception {
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--node-name=worker-1", "--kubeconfig=" + MockApiKubeconfig.write(dir, client),
                "--device-source=mock", "--monitor-listen=127.0.0.1:0", "--mock-gpus=L4-24GB:2", "--handshake-interval=2s",
                "--device-plugin=true", "--device-plugin-dir=" + plugins,
                "--device-plugin-host-root=" + Files.createDirectories(dir.resolve("host")),
                "--pod-field-selector=false"));
        return args;
    }

    private AgentProcess run() throws Exception {
        AgentProcess agent = AgentProcess.start(args());
        cleanup.add(agent);
        return agent;
    }

    private String readyz(AgentProcess agent) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + agent.healthPort()
                + "/readyz?verbose")).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private String register() {
        return Annotations.get(client.nodes().withName("worker-1").get().getMetadata().getAnnotations(),
                Annotations.NODE_NVIDIA_REGISTER);
    }

    /** {@code [0.123s][info][class,load] io.tenantgateway.… source: …}. */
    private static final Pattern LOADED = Pattern.compile("\\[class,load\\s*\\] (\\S+) source: ");
    /** What a pure-NVIDIA node must never load: the simulated vendors' classes (issue 27). */
    private static final Pattern OTHER_VENDORS = Pattern.compile("(?i)hygon|ascend|VendorPreset");

    @Test
    void registersWithKubeletAndCompletesAnAllocationInAllocate() throws Exception {
        // Started as the image starts it, with the JVM's class-load log: a pure-NVIDIA node loads no vendor class.
        Path classLog = dir.resolve("class-load.log");
        AgentProcess agent = AgentProcess.launch(args(), Map.of("JAVA_OPTS",
                "-Xlog:class+load=info:file=" + classLog));
        cleanup.add(agent);

        await().atMost(Duration.ofSeconds(60)).until(() -> kubelet.plugin("nvidia.com/gpu")
                .map(p -> p.healthyIds().size() == 20).orElse(false));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(readyz(agent))
                .contains("[+]device-plugin-registered ok", "[+]devices-registered ok", "readyz check passed"));
        assertThat(register()).contains("\"count\":10", "\"type\":\"NVIDIA L4\"");
        String debug = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + agent.adminPort()
                + "/debug/devices")).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(debug.replace(" : ", ":")).contains("\"devicePlugin\"", "\"phase\":\"REGISTERED\"",
                "\"devices\":20", "\"healthy\":20", "\"resource\":\"nvidia.com/gpu\"");
        String gpu = kubelet.plugin("nvidia.com/gpu").orElseThrow().healthyIds().get(0).replaceFirst("-0$", "");

        // HAMi's Filter and Bind wrote these; kubelet now admits the pod bound to its node.
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, "worker-1");
        annotations.put(Annotations.POD_DEVICES_TO_ALLOCATE, gpu + ",NVIDIA,4096,25:;");
        annotations.put(Annotations.POD_DEVICES_ALLOCATED, gpu + ",NVIDIA,4096,25:;");
        annotations.put(Annotations.POD_BIND_PHASE, "allocating");
        annotations.put(Annotations.POD_BIND_TIME, "1748772001");
        Pod pod = client.pods().inNamespace("team-a").resource(new PodBuilder().withNewMetadata().withName("p1")
                .withNamespace("team-a").withAnnotations(annotations).endMetadata().withNewSpec().withNodeName("worker-1")
                .addNewContainer().withName("cuda").withImage("cuda:12").endContainer().endSpec().withNewStatus()
                .withPhase("Pending").endStatus().build()).create();
        client.nodes().withName("worker-1").edit(n -> new NodeBuilder(n).editMetadata()
                .addToAnnotations(Annotations.NODE_LOCK, "2025-06-01T10:00:00Z,team-a,p1").endMetadata().build());

        KubeletStandIn.PodResult result = kubelet.admitPod("nvidia.com/gpu", pod.getMetadata().getUid(),
                List.of(new ContainerRequest("cuda", 1)));

        assertThat(result.admitted()).as(String.valueOf(result.error())).isTrue();
        assertThat(result.containers().get(0).response().getContainerResponses(0).getEnvsMap())
                .containsEntry("NVIDIA_VISIBLE_DEVICES", gpu).containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "4096m")
                .containsEntry("CUDA_DEVICE_SM_LIMIT", "25");
        Pod allocated = client.pods().inNamespace("team-a").withName("p1").get();
        assertThat(allocated.getMetadata().getAnnotations()).containsEntry(Annotations.POD_BIND_PHASE, "success")
                .containsEntry(Annotations.POD_DEVICES_TO_ALLOCATE, ";");
        assertThat(Annotations.get(client.nodes().withName("worker-1").get().getMetadata().getAnnotations(),
                Annotations.NODE_LOCK)).isNull();
        assertThat(agent.lines("device plugin registered with kubelet")).isNotEmpty();
        assertThat(agent.lines("allocation completed pod=team-a/p1")).isNotEmpty();

        agent.signal("TERM");
        assertThat(agent.awaitExit(Duration.ofSeconds(60))).isZero();
        List<String> loaded = new ArrayList<>();
        for (String line : Files.readAllLines(classLog)) {
            Matcher matcher = LOADED.matcher(line);
            if (matcher.find()) {
                loaded.add(matcher.group(1));
            }
        }
        assertThat(loaded).as("the log is the real one").contains(
                "io.tenantgateway.deviceplugin.policy.NvidiaAllocation",
                "io.tenantgateway.agent.deviceplugin.HamiAllocator", "io.tenantgateway.agent.devices.DeviceRegistrar");
        assertThat(loaded.stream().filter(name -> name.startsWith("io.tenantgateway.")
                && OTHER_VENDORS.matcher(name).find())).as("vendor classes loaded by a pure-NVIDIA node").isEmpty();
    }

    @Test
    void anotherPluginOnTheSocketKeepsItsDevicePluginAndRegistrationOff() throws Exception {
        ForeignDevicePlugin foreign = new ForeignDevicePlugin(plugins.resolve("nvidia-gpu.sock"));
        cleanup.add(foreign);

        AgentProcess agent = run();

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(agent.lines(
                "device plugin does not start: " + plugins.resolve("nvidia-gpu.sock") + " is served by another device"
                        + " plugin (HAMi's or NVIDIA's")).isNotEmpty());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(readyz(agent))
                .contains("[+]device-plugin-registered ok", "[+]devices-registered ok"));
        assertThat(agent.lines("Device registration stopped node=worker-1")).isNotEmpty();
        assertThat(register()).as("the other plugin's annotation, not ours").isNull();
        assertThat(kubelet.registrations()).isEmpty();

        StringWriter out = new StringWriter();
        List<String> doctor = new ArrayList<>(List.of("doctor"));
        doctor.addAll(args());
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true),
                doctor.toArray(String[]::new));
        assertThat(code).as(out.toString()).isEqualTo(1);
        assertThat(out.toString()).containsPattern("FAIL +device-plugin +" + java.util.regex.Pattern.quote(
                plugins.resolve("nvidia-gpu.sock") + " is served by another device plugin") + ".*: the agent's device"
                + " plugin does not start and the agent does not write hami.io/node-nvidia-register \\(two plugins"
                + " must not both serve nvidia.com/gpu, HAMi #2076\\)")
                .contains("fix: remove HAMi's device plugin (helm upgrade hami --set devicePlugin.enabled=false");
        assertThat(register()).isNull();
    }

    @Test
    void doctorSaysWhichSimulatedVendorStandsAsideForItsRealPlugin() throws Exception {
        ForeignDevicePlugin realAscend = new ForeignDevicePlugin(plugins.resolve("Ascend910B4.sock"));
        cleanup.add(realAscend);

        StringWriter out = new StringWriter();
        List<String> doctor = new ArrayList<>(List.of("doctor"));
        doctor.addAll(args());
        doctor.add("--mock-devices=Ascend910B4:1,DCU-K100:1");
        Main.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), doctor.toArray(String[]::new));

        assertThat(out.toString()).containsPattern("WARN +device-plugin +.*; a real plugin serves Ascend910B4")
                .containsPattern("Ascend910B4 \\(huawei.com/Ascend910B4\\): " + Pattern.quote(plugins.resolve(
                        "Ascend910B4.sock") + " is served by another device plugin") + ".*: the simulated Ascend910B4"
                        + " plugin stands aside and the agent does not write hami.io/node-register-Ascend910B4")
                .contains("Hygon (hygon.com/dcunum): nobody serves " + plugins.resolve("hygon.com_dcunum"))
                .contains("fix: simulated devices stand aside where the real plugin runs");
    }
}
