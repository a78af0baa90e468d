package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.tools.hamisim.BindResult;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lab scheduler against a CRUD mock API server: requests from the pod's limits, devices from each vendor's node
 * register annotation, use from the pods already placed, and the per-vendor Filter writes. One server for the class.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LabSchedulerIT {
    private static final String NAMESPACE = "team-b";
    private static final Instant NOW = Instant.parse("2025-06-01T10:00:00Z");
    private static final String DCU_REGISTER = "DCU-K100A,4,65520,100,DCU-K100,0,true,0,hami:";
    private static final String NPU_0 = "1A2B3C4D-00000000-00000000-00000000-00000001";
    private static final String NPU_REGISTER = "[{\"id\":\"" + NPU_0 + "\",\"count\":4,\"devmem\":32768,"
            + "\"devcore\":20,\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":0},"
            + "\"devicepairscore\":{}}]";
    private static final String ASCEND_REGISTER_KEY = NodeVendor.ascend("Ascend910B4").registerKey();

    private static KubernetesMockServer server;
    private static KubernetesClient client;
    private LabScheduler scheduler;

    @BeforeAll
    static void startServer() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        server = new KubernetesMockServer(new Context(), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient(builder -> builder.editOrNewConfig().withRequestRetryBackoffLimit(0).endConfig());
    }

    @AfterAll
    static void stopServer() {
        client.close();
        server.destroy();
    }

    @BeforeEach
    void emptyCluster() {
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        scheduler = new LabScheduler(client, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    private static void node(String name, Map<String, String> annotations) {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withAnnotations(annotations)
                .endMetadata().build()).create();
    }

    /** A pod as the webhook leaves it: schedulerName hami-scheduler, one container per limits map. */
    @SafeVarargs
    private static void pod(String name, Map<String, String> annotations, Map<String, String>... containers) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE)
                .withAnnotations(annotations).endMetadata().withNewSpec().withSchedulerName("hami-scheduler")
                .endSpec().withNewStatus().withPhase("Pending").endStatus();
        for (int i = 0; i < containers.length; i++) {
            ContainerBuilder container = new ContainerBuilder().withName("c" + i).withImage("busybox");
            Map<String, Quantity> limits = new LinkedHashMap<>();
            containers[i].forEach((k, v) -> limits.put(k, new Quantity(v)));
            pod.editSpec().addToContainers(container.withNewResources().withLimits(limits).endResources().build())
                    .endSpec();
        }
        client.pods().inNamespace(NAMESPACE).resource(pod.build()).create();
    }

    private static Map<String, String> annotations(String pod) {
        return client.pods().inNamespace(NAMESPACE).withName(pod).get().getMetadata().getAnnotations();
    }

    private static Map<String, String> npu(String memory) {
        return Map.of("huawei.com/Ascend910B4", "1", "huawei.com/Ascend910B4-memory", memory);
    }

    private static Map<String, String> dcu(String memory, String cores) {
        return Map.of("hygon.com/dcunum", "1", "hygon.com/dcumem", memory, "hygon.com/dcucores", cores);
    }

    @Test
    void aPodAskingForAnAscendChipAndADcuGetsEachVendorsKeysAndOneLock() {
        node("worker-b2", Map.of(NodeVendor.HYGON.registerKey(), DCU_REGISTER, ASCEND_REGISTER_KEY, NPU_REGISTER));
        pod("mixed", Map.of(), npu("8192"), dcu("4096", "30"));

        LabScheduler.FilterResult result = scheduler.filter(NAMESPACE, "mixed");

        assertThat(result.refusal()).isEmpty();
        assertThat(result.node()).contains("worker-b2");
        assertThat(result.devices()).as("no NVIDIA request").isEmpty();
        assertThat(annotations("mixed")).containsExactlyInAnyOrderEntriesOf(Map.of(
                Annotations.POD_VGPU_NODE, "worker-b2",
                Annotations.POD_VGPU_TIME, "1748772000",
                "hami.io/dcu-devices-to-allocate", ";DCU-K100A,DCU,4096,30:;",
                "hami.io/dcu-devices-allocated", ";DCU-K100A,DCU,4096,30:;",
                "hami.io/Ascend910B4-devices-to-allocate", NPU_0 + ",Ascend910B4,8192,0:;;",
                "hami.io/Ascend910B4-devices-allocated", NPU_0 + ",Ascend910B4,8192,0:;;",
                "predicate-time", "1748772000",
                "huawei.com/Ascend910B4", "[{\"UUID\":\"" + NPU_0 + "\",\"temp\":\"vir05_1c_8g\",\"memory\":8192}]"));

        assertThat(scheduler.bind(NAMESPACE, "mixed", "worker-b2")).isEqualTo(new BindResult(true, ""));
        assertThat(client.nodes().withName("worker-b2").get().getMetadata().getAnnotations())
                .containsEntry(Annotations.NODE_LOCK, "2025-06-01T10:00:00Z,team-b,mixed");
    }

    @Test
    void whatPlacedPodsHoldIsCountedPerVendor() {
        node("worker-b2", Map.of(NodeVendor.HYGON.registerKey(), DCU_REGISTER, ASCEND_REGISTER_KEY, NPU_REGISTER));
        pod("slices", Map.of(), npu("16384"), dcu("32768", "50"));
        assertThat(scheduler.filter(NAMESPACE, "slices").fits()).isTrue();

        pod("whole-npu", Map.of(), npu("32768"));
        assertThat(scheduler.filter(NAMESPACE, "whole-npu").refusal()).isEqualTo("worker-b2: no Ascend910B4 device "
                + "fits container c0 (1 × 32768 MiB, 0 cores): #0 1A2B3C4D-000 memory: 16384 of 32768 MiB free, "
                + "32768 requested");
        pod("half-dcu", Map.of(), dcu("32752", "50"));
        assertThat(scheduler.filter(NAMESPACE, "half-dcu").fits()).as("32768 + 32752 = 65520, 50 + 50 cores").isTrue();
        pod("more-dcu", Map.of(), dcu("1", "1"));
        assertThat(scheduler.filter(NAMESPACE, "more-dcu").refusal()).endsWith("memory: 0 of 65520 MiB free, 1 "
                + "requested");
        assertThat(annotations("whole-npu")).as("nothing written on a refusal").isNullOrEmpty();
    }

    @Test
    void nodesWithoutTheVendorsRegisterAreSkipped() {
        node("a-gpu", Map.of(Annotations.NODE_NVIDIA_REGISTER, "[{\"id\":\"GPU-a\",\"count\":10,\"devmem\":81920,"
                + "\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"health\":true}]"));
        node("b-npu", Map.of(ASCEND_REGISTER_KEY, NPU_REGISTER));
        pod("npu", Map.of(), npu("32768"));
        pod("dcu", Map.of(), dcu("1024", "10"));

        assertThat(scheduler.filter(NAMESPACE, "npu").node()).contains("b-npu");
        assertThat(annotations("npu")).doesNotContainKey(Annotations.POD_DEVICES_TO_ALLOCATE)
                .containsEntry("huawei.com/Ascend910B4", "[{\"UUID\":\"" + NPU_0 + "\",\"memory\":32768}]");
        assertThat(scheduler.filter(NAMESPACE, "dcu").refusal()).isEqualTo("a-gpu: no Hygon device fits container c0 "
                + "(1 × 1024 MiB, 10 cores): 0 of type DCU registered, 1 requested | b-npu: no Hygon device fits "
                + "container c0 (1 × 1024 MiB, 10 cores): 0 of type DCU registered, 1 requested");
    }

    @Test
    void aHamiCorePodNeedsANodeRunningHamiCore() {
        node("a-templates", Map.of(ASCEND_REGISTER_KEY, NPU_REGISTER, "hami-vnpu-core", "false"));
        node("b-hami-core", Map.of(ASCEND_REGISTER_KEY, NPU_REGISTER.replace(NPU_0, "NPU-B"), "hami-vnpu-core",
                "true"));
        pod("soft", Map.of("huawei.com/vnpu-mode", "hami-core"), Map.of("huawei.com/Ascend910B4", "1",
                "huawei.com/Ascend910B4-memory", "4096", "huawei.com/Ascend910B4-core", "40"));

        LabScheduler.FilterResult result = scheduler.filter(NAMESPACE, "soft");

        assertThat(result.node()).contains("b-hami-core");
        assertThat(annotations("soft")).containsEntry("huawei.com/Ascend910B4",
                "[{\"UUID\":\"NPU-B\",\"memory\":4096,\"core\":40}]");
        client.nodes().withName("b-hami-core").delete();
        pod("soft-2", Map.of("huawei.com/vnpu-mode", "hami-core"), npu("4096"));
        assertThat(scheduler.filter(NAMESPACE, "soft-2").refusal()).isEqualTo("a-templates: no Ascend910B4 device "
                + "fits: the pod asks for hami-core mode, the node does not run it (hami-vnpu-core: false)");
    }

    @Test
    void nvidiaPodsAreWrittenAsBefore() {
        node("a-gpu", Map.of(Annotations.NODE_NVIDIA_REGISTER, "[{\"id\":\"GPU-a\",\"count\":10,\"devmem\":81920,"
                + "\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"health\":true}]"));
        pod("cuda", Map.of(), Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "10000", "nvidia.com/gpucores",
                "30"));

        assertThat(scheduler.filter(NAMESPACE, "cuda").devices()).containsExactly(
                List.of(io.tenantgateway.hami.ContainerDevice.nvidia("GPU-a", 10000, 30)));
        assertThat(annotations("cuda")).containsExactlyInAnyOrderEntriesOf(Map.of(
                Annotations.POD_VGPU_NODE, "a-gpu",
                Annotations.POD_VGPU_TIME, "1748772000",
                Annotations.POD_DEVICES_TO_ALLOCATE, "GPU-a,NVIDIA,10000,30:;",
                Annotations.POD_DEVICES_ALLOCATED, "GPU-a,NVIDIA,10000,30:;"));
    }
}
