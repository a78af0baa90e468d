package io.tenantgateway.agent.deviceplugin;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.groups.Tuple.tuple;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.agent.node.NodeIdentity;
import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.channels.DeviceDiscovery.VendorDevices;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.PartManager;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot.Phase;
import io.tenantgateway.deviceplugin.testing.ForeignDevicePlugin;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn.ContainerRequest;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.Device;
import io.tenantgateway.deviceplugin.v1beta1.RegisterRequest;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulated Hygon and Ascend device plugins end to end, in process: the agent's {@link DevicePluginPart} started
 * by the part manager, fed by a stand-in for device registration (what mock mode publishes), against the kubelet
 * stand-in over real Unix sockets and fabric8's mock API server (CRUD). Per vendor: its own socket and replica IDs,
 * Allocate's answer and erased entry, HAMi's failures; across vendors: a pod asking for NVIDIA and Ascend completes
 * and releases its node lock once, after the last entry of the last vendor. Values from
 * device-plugin/VENDOR-PLUGINS.md.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class VendorDevicePluginsIT {
    static final String NODE = "worker-1";
    static final String NS = "team-a";
    static final String LOCKED_AT = "2025-06-01T10:00:00Z";
    static final String GPU = "GPU-a1f2e3d4-0000-4000-8000-00000000000a";
    static final String DCU_A = "DCU-ABC123";
    static final String DCU_B = "DCU-DEF456";
    static final String NPU_0 = "1A2B3C4D-00000000-11111111-22222222-33333333";
    static final String NPU_1 = "5E6F7A8B-44444444-55555555-66666666-77777777";
    static final NodeVendor ASCEND = NodeVendor.ascend("Ascend910B4");
    static final String NVIDIA_RESOURCE = "nvidia.com/gpu";
    static final String HYGON_RESOURCE = "hygon.com/dcunum";
    static final String ASCEND_RESOURCE = "huawei.com/Ascend910B4";
    static final String ASCEND_KEY = "hami.io/Ascend910B4-devices-to-allocate";
    static final String DCU_KEY = "hami.io/dcu-devices-to-allocate";
    static final String RUNTIME_KEY = "huawei.com/Ascend910B4";

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final List<AutoCloseable> cleanup = new ArrayList<>();
    private final List<RegistrationOwnedElsewhere> ownedElsewhere = new CopyOnWriteArrayList<>();
    private KubeletStandIn kubelet;
    private Path plugins;
    private DevicePluginPart part;
    private PartManager manager;
    private volatile PartContext registration;
    private List<HealthCheck> checks = List.of();
    private HamiClusterView cluster;

    /** Device registration, as mock mode runs it: it publishes what it discovered, and follows the plugins' word. */
    private final class RegistrationStandIn implements Part {
        @Override
        public Plan plan() {
            return Plan.of("devices").after("device-plugin");
        }

        @Override
        public void start(PartContext context) {
            registration = context;
            context.channel(RegistrationOwnedElsewhere.CHANNEL).subscribe(ownedElsewhere::add);
        }
    }

    @BeforeEach
    void start() throws Exception {
        cluster = new HamiClusterView(client, registry, NODE, NS);
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        plugins = Files.createDirectories(dir.resolve("dp"));
        kubelet = KubeletStandIn.start(plugins);
        cleanup.add(kubelet);
    }

    /** The part, started with the other vendors' devices (and with NVIDIA's GPU) discovered. */
    private void startAgent(boolean withHygon) throws Exception {
        AllocatorConfig allocator = AllocatorConfig.defaults(NODE)
                .withHostRoot(Files.createDirectories(dir.resolve("host")))
                .withRetry(Backoff.hamiNodeLock(Duration.ofMillis(5))).withPodFieldSelector(false);
        part = new DevicePluginPart(new DevicePluginSettings(DevicePluginConfig.of(plugins, NVIDIA_RESOURCE)
                .withCheckInterval(Duration.ofMinutes(5)), allocator));
        manager = new PartManager(List.of(new RegistrationStandIn(), part), registry, Clock.systemUTC(),
                NodeIdentity.of(Optional.of(NODE)), "test", "agent-1", MockApiKubeconfig.write(dir, client),
                () -> false);
        cleanup.add(manager);
        checks = manager.declareChecks();
        manager.start();
        publish(withHygon, true);
    }

    private void publish(boolean withHygon, boolean withAscend) {
        List<VendorDevices> vendors = new ArrayList<>();
        if (withHygon) {
            vendors.add(new VendorDevices(NodeVendor.HYGON, List.of(
                    RegisteredDevice.of(DCU_A, 0, 4, 65520, 100, "DCU-K100_AI", 0, "hami", true),
                    RegisteredDevice.of(DCU_B, 1, 4, 65520, 100, "DCU-K100_AI", 0, "hami", true))));
        }
        if (withAscend) {
            vendors.add(new VendorDevices(ASCEND, List.of(
                    RegisteredDevice.of(NPU_0, 0, 4, 32768, 20, "Ascend910B4", 0, "", true),
                    RegisteredDevice.of(NPU_1, 1, 4, 32768, 20, "Ascend910B4", 0, "", true))));
        }
        registration.channel(DeviceDiscovery.CHANNEL).publish(DeviceDiscovery.found(List.of(
                new GpuDevice(GPU, 0, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true)), vendors));
    }

    private void awaitRegistered() {
        await().atMost(WAIT).until(() -> kubelet.plugin(NVIDIA_RESOURCE).map(p -> p.healthyIds().size() == 10)
                .orElse(false) && kubelet.plugin(HYGON_RESOURCE).map(p -> p.healthyIds().size() == 8).orElse(false)
                && kubelet.plugin(ASCEND_RESOURCE).map(p -> p.healthyIds().size() == 8).orElse(false));
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
        client.pods().inNamespace(NS).delete();
        client.v1().events().inAnyNamespace().delete();
        client.nodes().withName(NODE).delete();
    }

    // ---------------------------------------------------------------- the scheduler's writes

    /** A pod after HAMi's Filter and Bind (locked by it): {@code annotations} are the vendors' keys. */
    private Pod bound(String name, Map<String, String> annotations, String... containers) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put(Annotations.POD_VGPU_NODE, NODE);
        all.put(Annotations.POD_VGPU_TIME, "1748772000");
        all.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING);
        all.put(Annotations.POD_BIND_TIME, "1748772001");
        annotations.forEach((key, value) -> {
            all.put(key, value);
            if (NodeVendor.isToAllocateKey(key)) {
                all.put(key.replace("-to-allocate", "-allocated"), value);
            }
        });
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).withUid("uid-" + name)
                .withAnnotations(all).endMetadata().withNewSpec().withNodeName(NODE).endSpec().withNewStatus()
                .withPhase("Pending").endStatus();
        for (String container : containers) {
            pod.editSpec().addToContainers(new ContainerBuilder().withName(container).withImage("app:1").build())
                    .endSpec();
        }
        Pod created = client.pods().inNamespace(NS).resource(pod.build()).create();
        cluster.setLock(LOCKED_AT + "," + NS + "," + name);
        return created;
    }

    private HealthCheck readinessCheck() {
        return checks.stream().filter(c -> c.name().equals(DevicePluginPart.CHECK)).findFirst().orElseThrow();
    }

    private ContainerAllocateResponse allocate(String resource, String... ids) {
        return kubelet.plugin(resource).orElseThrow().allocate(List.of(ids)).getContainerResponses(0);
    }

    private static String runtime(String uuid, String temp, long memory) {
        return "[{\"UUID\":\"" + uuid + "\"" + (temp.isEmpty() ? "" : ",\"temp\":\"" + temp + "\"")
                + ",\"memory\":" + memory + "}]";
    }

    // ---------------------------------------------------------------- tests

    @Test
    void eachVendorGetsAPluginOnItsOwnSocketWithItsReplicas() throws Exception {
        startAgent(true);

        awaitRegistered();
        assertThat(kubelet.registrations()).extracting(RegisterRequest::getResourceName, RegisterRequest::getEndpoint,
                r -> r.getOptions().getGetPreferredAllocationAvailable()).containsExactlyInAnyOrder(
                        tuple(NVIDIA_RESOURCE, "nvidia-gpu.sock", true),
                        tuple(HYGON_RESOURCE, "hygon.com_dcunum", false),
                        tuple(ASCEND_RESOURCE, "Ascend910B4.sock", false));
        assertThat(kubelet.plugin(HYGON_RESOURCE).orElseThrow().devices()).extracting(Device::getID).containsExactly(
                DCU_A + "-fake-0", DCU_A + "-fake-1", DCU_A + "-fake-2", DCU_A + "-fake-3",
                DCU_B + "-fake-0", DCU_B + "-fake-1", DCU_B + "-fake-2", DCU_B + "-fake-3");
        assertThat(kubelet.plugin(ASCEND_RESOURCE).orElseThrow().devices()).extracting(Device::getID).containsExactly(
                NPU_0 + "-0", NPU_0 + "-1", NPU_0 + "-2", NPU_0 + "-3", NPU_1 + "-0", NPU_1 + "-1", NPU_1 + "-2",
                NPU_1 + "-3");
        assertThat(part.plugins()).extracting(p -> p.config().resourceName()).containsExactly(NVIDIA_RESOURCE,
                HYGON_RESOURCE, ASCEND_RESOURCE);
        assertThat(part.plugin()).get().extracting(p -> p.config().resourceName()).isEqualTo(NVIDIA_RESOURCE);
        await().atMost(WAIT).untilAsserted(() -> assertThat(readinessCheck().run()).isEqualTo(HealthCheck.Result.OK));

        // A vendor missing from a later discovery stays registered, listing nothing.
        publish(false, true);
        await().atMost(WAIT).until(() -> kubelet.plugin(HYGON_RESOURCE).orElseThrow().devices().isEmpty());
        assertThat(kubelet.plugin(ASCEND_RESOURCE).orElseThrow().healthyIds()).hasSize(8);
        assertThat(ownedElsewhere).isEmpty();
    }

    /** Readiness covers every plugin: a vendor's plugin still waiting for kubelet keeps the check failing. */
    @Test
    void readinessWaitsForEveryVendorsPlugin() throws Exception {
        kubelet.close();

        startAgent(true);

        await().atMost(WAIT).untilAsserted(() -> assertThat(readinessCheck().run().reason()).contains(
                "waiting for kubelet: no " + plugins.resolve("kubelet.sock"),
                "hygon.com/dcunum: serving on " + plugins.resolve("hygon.com_dcunum") + ", waiting for kubelet",
                "huawei.com/Ascend910B4: serving on " + plugins.resolve("Ascend910B4.sock") + ", waiting for kubelet"));
        assertThat(readinessCheck().run().ok()).isFalse();

        kubelet = KubeletStandIn.start(plugins);
        cleanup.add(kubelet);

        awaitRegistered();
        await().atMost(WAIT).untilAsserted(() -> assertThat(readinessCheck().run()).isEqualTo(HealthCheck.Result.OK));
    }

    @Test
    void hygonAnswersWithoutHostPathsAndCompletesThePod() throws Exception {
        startAgent(true);
        awaitRegistered();
        Pod pod = bound("p1", Map.of(DCU_KEY, DCU_B + ",DCU,4096,30:;"), "dcu");

        KubeletStandIn.PodResult result = kubelet.admitPod(HYGON_RESOURCE, pod.getMetadata().getUid(),
                List.of(new ContainerRequest("dcu", 1)));

        assertThat(result.admitted()).as(String.valueOf(result.error())).isTrue();
        ContainerAllocateResponse answer = result.containers().get(0).response().getContainerResponses(0);
        assertThat(answer.getEnvsMap()).isEmpty();
        assertThat(answer.getMountsList()).isEmpty();
        assertThat(answer.getDevicesList()).isEmpty();
        assertThat(answer.getAnnotationsMap()).isEmpty();
        assertThat(cluster.annotation("p1", DCU_KEY)).isEqualTo(";");
        assertThat(cluster.annotation("p1", "hami.io/dcu-devices-allocated")).isEqualTo(DCU_B + ",DCU,4096,30:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("allocated devices [" + DCU_B + "] on node worker-1"));
    }

    @Test
    void ascendGivesThePhysicalIdAndTheTemplateOrHamiCoresQuota() throws Exception {
        startAgent(false);
        await().atMost(WAIT).until(() -> kubelet.plugin(ASCEND_RESOURCE).map(p -> p.healthyIds().size() == 8)
                .orElse(false));
        bound("p1", Map.of(ASCEND_KEY, NPU_1 + ",Ascend910B4,8192,0:;", RUNTIME_KEY, runtime(NPU_1, "vir05_1c_8g",
                8192)), "npu");

        ContainerAllocateResponse template = allocate(ASCEND_RESOURCE, NPU_1 + "-2");

        assertThat(template.getEnvsMap()).containsOnly(entry("ASCEND_VISIBLE_DEVICES", "1"),
                entry("ASCEND_VNPU_SPECS", "vir05_1c_8g"));
        assertThat(template.getMountsList()).isEmpty();
        assertThat(cluster.annotation("p1", ASCEND_KEY)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();

        Map<String, String> hamiCore = new LinkedHashMap<>();
        hamiCore.put(ASCEND_KEY, NPU_0 + ",Ascend910B4,4096,40:;");
        hamiCore.put(RUNTIME_KEY, "[{\"UUID\":\"" + NPU_0 + "\",\"memory\":4096,\"core\":40}]");
        hamiCore.put("huawei.com/vnpu-mode", "hami-core");
        bound("p2", hamiCore, "npu");

        ContainerAllocateResponse shared = allocate(ASCEND_RESOURCE, NPU_0 + "-0");

        assertThat(shared.getEnvsMap()).containsOnly(entry("ASCEND_VISIBLE_DEVICES", "0"),
                entry("NPU_MEM_QUOTA", "4096"), entry("NPU_PRIORITY", "40"),
                entry("NPU_GLOBAL_SHM_PATH", "/hami-shared-region/0_global_registry"),
                entry("NPU_LOCAL_SHM_PATH", "/hami-vnpu-shmem/vnpu_local_shmem"));
        assertThat(shared.getMountsList()).isEmpty();
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
        assertThat(part.plugins()).extracting(p -> p.config().resourceName()).containsExactly(NVIDIA_RESOURCE,
                ASCEND_RESOURCE);
    }

    /** An NVIDIA container and an Ascend container: the first Allocate leaves the pod allocating and locked. */
    @Test
    void aPodAskingForTwoVendorsCompletesAndReleasesOnceAfterTheLastEntry() throws Exception {
        startAgent(false);
        awaitTwo();
        Map<String, String> both = new LinkedHashMap<>();
        both.put(Annotations.POD_DEVICES_TO_ALLOCATE, GPU + ",NVIDIA,4096,25:;;");
        both.put(ASCEND_KEY, ";" + NPU_0 + ",Ascend910B4,32768,0:;");
        both.put(RUNTIME_KEY, "[{\"UUID\":\"" + NPU_0 + "\",\"memory\":32768}]");
        bound("p1", both, "cuda", "npu");

        ContainerAllocateResponse cuda = allocate(NVIDIA_RESOURCE, GPU + "-0");

        assertThat(cuda.getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU);
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";;");
        assertThat(cluster.annotation("p1", ASCEND_KEY)).isEqualTo(";" + NPU_0 + ",Ascend910B4,32768,0:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).as("Ascend's entry is still to come")
                .isEqualTo("allocating");
        assertThat(cluster.lock()).isEqualTo(LOCKED_AT + ",team-a,p1");
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).isEmpty();

        ContainerAllocateResponse npu = allocate(ASCEND_RESOURCE, NPU_0 + "-3");

        assertThat(npu.getEnvsMap()).containsOnly(entry("ASCEND_VISIBLE_DEVICES", "0"));
        assertThat(cluster.annotation("p1", ASCEND_KEY)).isEqualTo(";;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("allocated devices [" + GPU + ", " + NPU_0 + "] on node worker-1"));
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).hasSize(1);
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "success")).isEqualTo(1);
        assertThat(cluster.lockReleases(ReleaseReason.ALLOCATED)).isEqualTo(1);
    }

    /** Both plugins' calls at once, pod after pod: each pod is completed, and its lock released, exactly once. */
    @Test
    void twoPluginsAllocatingOnePodAtOnceCompleteItOnce() throws Exception {
        startAgent(false);
        awaitTwo();
        ExecutorService callers = Executors.newFixedThreadPool(2);
        cleanup.add(callers::shutdownNow);
        int pods = 5;
        for (int i = 0; i < pods; i++) {
            String name = "p" + i;
            Map<String, String> both = new LinkedHashMap<>();
            both.put(Annotations.POD_DEVICES_TO_ALLOCATE, ";" + GPU + ",NVIDIA,2048,10:;");
            both.put(ASCEND_KEY, NPU_1 + ",Ascend910B4,8192,0:;;");
            both.put(RUNTIME_KEY, runtime(NPU_1, "vir05_1c_8g", 8192));
            bound(name, both, "npu", "cuda");
            CountDownLatch go = new CountDownLatch(1);
            Future<ContainerAllocateResponse> cuda = callers.submit(() -> {
                go.await();
                return allocate(NVIDIA_RESOURCE, GPU + "-" + 1);
            });
            Future<ContainerAllocateResponse> npu = callers.submit(() -> {
                go.await();
                return allocate(ASCEND_RESOURCE, NPU_1 + "-1");
            });
            go.countDown();

            assertThat(cuda.get(WAIT.toSeconds(), TimeUnit.SECONDS).getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU);
            assertThat(npu.get(WAIT.toSeconds(), TimeUnit.SECONDS).getEnvsMap()).containsEntry("ASCEND_VISIBLE_DEVICES", "1");
            assertThat(cluster.annotation(name, Annotations.POD_BIND_PHASE)).isEqualTo("success");
            assertThat(cluster.lock()).isNull();
        }
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).hasSize(pods);
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).hasSize(pods);
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "success")).isEqualTo(pods);
        assertThat(cluster.lockReleases(ReleaseReason.ALLOCATED)).isEqualTo(pods);
    }

    @Test
    void aWrongCountFailsThePodReleasesItsLockAndWarnsInTheVendorsWords() throws Exception {
        startAgent(true);
        awaitRegistered();
        bound("p1", Map.of(ASCEND_KEY, NPU_0 + ",Ascend910B4,8192,0:;", RUNTIME_KEY, runtime(NPU_0, "vir05_1c_8g",
                8192)), "npu");

        Throwable error = catchThrowable(() -> allocate(ASCEND_RESOURCE, NPU_0 + "-0", NPU_0 + "-1"));

        assertThat(error).hasMessage("UNKNOWN: device number not matched: annotation has 1, request has 2");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.annotation("p1", ASCEND_KEY)).as("nothing handed out")
                .isEqualTo(NPU_0 + ",Ascend910B4,8192,0:;");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).singleElement().satisfies(e -> {
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getMessage()).isEqualTo("device number not matched: annotation has 1, request has 2"
                    + " (container npu of team-a/p1: entry 0 names 1 device(s), kubelet allocated 2 [" + NPU_0
                    + "-0, " + NPU_0 + "-1])");
        });

        bound("p2", Map.of(DCU_KEY, DCU_A + ",DCU,4096,30:;"), "dcu");
        assertThat(catchThrowable(() -> allocate(HYGON_RESOURCE, DCU_A + "-fake-0", DCU_B + "-fake-0")))
                .hasMessage("UNKNOWN: device number not matched");
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.lock()).isNull();

        bound("p3", Map.of(DCU_KEY, "DCU-999999,DCU,4096,30:;"), "dcu");
        assertThat(catchThrowable(() -> allocate(HYGON_RESOURCE, DCU_A + "-fake-1")))
                .hasMessage("UNKNOWN: device serial number 999999 not found in mapper");
        assertThat(cluster.annotation("p3", Annotations.POD_BIND_PHASE)).isEqualTo("failed");

        bound("p4", Map.of(ASCEND_KEY, NPU_0 + ",Ascend910B4,8192,0:;"), "npu");
        assertThat(catchThrowable(() -> allocate(ASCEND_RESOURCE, NPU_0 + "-2")))
                .hasMessage("UNKNOWN: build runtimeInfo lookup: annotation huawei.com/Ascend910B4 not set");
        assertThat(cluster.annotation("p4", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).hasSize(4);
        assertThat(cluster.lockReleases(ReleaseReason.FAILED)).isEqualTo(4);
    }

    /**
     * A 20 KB {@code huawei.com/Ascend910B4} annotation full of terminal escapes: the plugin's error text, which
     * echoes the value, reaches kubelet as UNKNOWN with the text cut at {@link PeerText#TEXT_LIMIT} (whole, it would
     * overflow the client's 8 KiB header limit: INTERNAL), naming the size and the limit, escaped; the log lines
     * about it are bounded and carry no control character.
     */
    @Test
    void aHugeHostileAnnotationGivesABoundedEscapedErrorAndLogLine() throws Exception {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
                .getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        root.addAppender(logged);
        cleanup.add(() -> root.detachAppender(logged));
        startAgent(false);
        awaitTwo();
        String hostile = "{\u001b]52;c;" + "A".repeat(20_480) + "\u0007\r\n\u001b[2J";
        bound("p1", Map.of(ASCEND_KEY, NPU_0 + ",Ascend910B4,8192,0:;", RUNTIME_KEY, hostile), "npu");

        Throwable error = catchThrowable(() -> allocate(ASCEND_RESOURCE, NPU_0 + "-0"));

        assertThat(error).isInstanceOf(io.grpc.StatusRuntimeException.class);
        io.grpc.Status status = ((io.grpc.StatusRuntimeException) error).getStatus();
        assertThat(status.getCode()).as("kubelet reads the plugin's answer, not a broken stream")
                .isEqualTo(io.grpc.Status.Code.UNKNOWN);
        String description = status.getDescription();
        assertThat(description).startsWith("build runtimeInfo lookup: annotation huawei.com/Ascend910B4 value"
                + " {\\x1b]52;c;AAAA").contains("A… (truncated, 20495 bytes, limit " + PeerText.VALUE_LIMIT
                + ") invalid: ").doesNotContain("\u001b", "\u0007", "\r", "\n");
        assertThat(description.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(PeerText.TEXT_LIMIT + 64);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).isEqualTo(description));

        List<String> lines = logged.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .toList();
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("allocation failed pod=team-a/p1"));
        assertThat(lines).allSatisfy(line -> {
            assertThat(line.length()).isLessThan(PeerText.TEXT_LIMIT + 512);
            assertThat(line).doesNotContain("\u001b", "\u0007", "\r");
        });
    }

    /** The lock names another pod, not bound yet: this call is not its; nothing of either pod is touched. */
    @Test
    void anotherPodsLockIsNeverTouched() throws Exception {
        startAgent(false);
        awaitTwo();
        bound("p1", Map.of(ASCEND_KEY, NPU_0 + ",Ascend910B4,8192,0:;", RUNTIME_KEY, runtime(NPU_0, "vir05_1c_8g",
                8192)), "npu");
        client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p2").withNamespace(NS)
                .withAnnotations(Map.of(Annotations.POD_VGPU_NODE, NODE, ASCEND_KEY, NPU_1 + ",Ascend910B4,8192,0:;",
                        Annotations.POD_BIND_PHASE, "allocating")).endMetadata().withNewSpec()
                .addToContainers(new ContainerBuilder().withName("npu").build()).endSpec().build()).create();
        String p2Lock = LOCKED_AT + ",team-a,p2";
        cluster.setLock(p2Lock);

        Throwable error = catchThrowable(() -> allocate(ASCEND_RESOURCE, NPU_0 + "-0"));

        assertThat(error).hasMessage("UNKNOWN: pod team-a/p2 named by hami.io/mutex.lock is not bound to node"
                + " worker-1 yet (its Bind is in progress): this Allocate is for another pod");
        assertThat(cluster.lock()).isEqualTo(p2Lock);
        assertThat(cluster.annotation("p2", ASCEND_KEY)).isEqualTo(NPU_1 + ",Ascend910B4,8192,0:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).isEmpty();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    /** A vendor's own plugin on its socket: that vendor's simulated plugin stands aside, the others serve. */
    @Test
    void aRealAscendPluginSetsOnlyTheSimulatedAscendAside() throws Exception {
        ForeignDevicePlugin foreign = new ForeignDevicePlugin(plugins.resolve("Ascend910B4.sock"));
        cleanup.add(foreign);

        startAgent(true);

        await().atMost(WAIT).until(() -> kubelet.plugin(HYGON_RESOURCE).map(p -> p.healthyIds().size() == 8)
                .orElse(false) && kubelet.plugin(NVIDIA_RESOURCE).isPresent());
        await().atMost(WAIT).until(() -> part.plugins().size() == 3
                && part.plugins().get(2).snapshot().phase() == Phase.STANDING_ASIDE);
        assertThat(kubelet.plugin(ASCEND_RESOURCE)).isEmpty();
        assertThat(ownedElsewhere).containsExactly(RegistrationOwnedElsewhere.NONE.with(
                NodeVendor.ascend("Ascend910B4"), plugins.resolve("Ascend910B4.sock") + " is served by another device"
                        + " plugin (GetDevicePluginOptions answered pre_start_required=false,"
                        + " get_preferred_allocation_available=true)"));
        await().atMost(WAIT).untilAsserted(() -> assertThat(readinessCheck().run()).isEqualTo(HealthCheck.Result.OK));
    }

    private void awaitTwo() {
        await().atMost(WAIT).until(() -> kubelet.plugin(NVIDIA_RESOURCE).map(p -> p.healthyIds().size() == 10)
                .orElse(false) && kubelet.plugin(ASCEND_RESOURCE).map(p -> p.healthyIds().size() == 8).orElse(false));
    }
}
