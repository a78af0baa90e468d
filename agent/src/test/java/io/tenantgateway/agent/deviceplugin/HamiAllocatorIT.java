package io.tenantgateway.agent.deviceplugin;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.agent.testing.ApiOutage;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn.ContainerRequest;
import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.Mount;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.GpuDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.tenantgateway.agent.health.LockMetrics;

/**
 * HAMi's Allocate end to end: the kubelet stand-in over real Unix sockets calls the agent's device plugin, whose
 * {@link HamiAllocator} reads and writes fabric8's mock API server (CRUD mode, real HTTP); pods carry what HAMi's
 * scheduler writes at Filter and Bind. Values are the spec's (shared/spec/device-plugin.md §2).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiAllocatorIT {
    static final String NODE = "worker-1";
    static final String NS = "team-a";
    static final String GPU_A = "GPU-a1f2e3d4-0000-4000-8000-00000000000a";
    static final String GPU_B = "GPU-b1f2e3d4-0000-4000-8000-00000000000b";
    static final Instant LOCKED_AT = Instant.parse("2025-06-01T10:00:00Z");
    static final String RESOURCE = "nvidia.com/gpu";

    @TempDir
    Path dir;

    private KubernetesMockServer server;
    private KubernetesClient client;
    private KubeletStandIn kubelet;
    private DevicePlugin plugin;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private LockMetrics metrics;
    private Path hostRoot;
    private HamiAllocator allocator;
    private HamiClusterView cluster;
    private final ApiOutage outage = new ApiOutage();

    @BeforeEach
    void start() throws Exception {
        server = outage.serve();
        client = ApiOutage.clientWithoutRetries(server);
        cluster = new HamiClusterView(client, registry, NODE, NS);
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        hostRoot = Files.createDirectories(dir.resolve("host"));
        Path plugins = Files.createDirectories(dir.resolve("dp"));
        kubelet = KubeletStandIn.start(plugins);
        metrics = new LockMetrics(registry);
        AllocatorConfig config = AllocatorConfig.defaults(NODE).withHostRoot(hostRoot)
                .withRetry(Backoff.hamiNodeLock(Duration.ofMillis(5))).withPodFieldSelector(false);
        allocator = new HamiAllocator(client, config, () -> plugin.gpuUuids(), metrics, Clock.fixed(LOCKED_AT
                .plusSeconds(2), ZoneOffset.UTC));
        allocator.start();
        plugin = new DevicePlugin(DevicePluginConfig.of(plugins, RESOURCE).withCheckInterval(Duration.ofMinutes(5)),
                allocator, registry, reason -> { }, "test", Clock.systemUTC());
        plugin.updateDevices(List.of(gpu(GPU_A, 0), gpu(GPU_B, 1)));
        plugin.start();
        await().atMost(WAIT).until(() -> kubelet.plugin(RESOURCE)
                .map(p -> p.healthyIds().size() == 20).orElse(false));
    }

    @AfterEach
    void stop() {
        plugin.close();
        allocator.close();
        kubelet.close();
        metrics.unregister();
        client.close();
        server.destroy();
    }

    private static GpuDevice gpu(String uuid, int index) {
        return new GpuDevice(uuid, index, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true);
    }

    // ---------------------------------------------------------------- the scheduler's writes

    /** A pod after HAMi's Filter and Bind: annotations, bound here, node lock taken (when {@code locked}). */
    private Pod bound(String name, String devices, List<String> initContainers, List<String> containers,
            boolean locked) {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Annotations.POD_VGPU_NODE, NODE);
        annotations.put(Annotations.POD_VGPU_TIME, "1748772000");
        annotations.put(Annotations.POD_DEVICES_TO_ALLOCATE, devices);
        annotations.put(Annotations.POD_DEVICES_ALLOCATED, devices);
        annotations.put(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING);
        annotations.put(Annotations.POD_BIND_TIME, "1748772001");
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
                .withUid("uid-" + name).withAnnotations(annotations).endMetadata()
                .withNewSpec().withNodeName(NODE).withSchedulerName("hami-scheduler").endSpec()
                .withNewStatus().withPhase("Pending").endStatus();
        initContainers.forEach(c -> pod.editSpec().addToInitContainers(container(c)).endSpec());
        containers.forEach(c -> pod.editSpec().addToContainers(container(c)).endSpec());
        Pod created = client.pods().inNamespace(NS).resource(pod.build()).create();
        if (locked) {
            cluster.setLock(LOCKED_AT + "," + NS + "," + name);
        }
        return created;
    }

    private static io.fabric8.kubernetes.api.model.Container container(String name) {
        return new ContainerBuilder().withName(name).withImage("cuda:12").build();
    }

    private KubeletStandIn.Plugin kubeletPlugin() {
        return kubelet.plugin(RESOURCE).orElseThrow();
    }

    // ---------------------------------------------------------------- tests

    @Test
    void oneContainerGetsHamisEnvAndMountsAndThePodIsAllocatedAndUnlocked() throws Exception {
        Pod pod = bound("p1", GPU_B + ",NVIDIA,10000,30:;", List.of(), List.of("cuda"), true);

        KubeletStandIn.PodResult result = kubelet.admitPod(RESOURCE, pod.getMetadata().getUid(),
                List.of(new ContainerRequest("cuda", 1)));

        assertThat(result.admitted()).as(String.valueOf(result.error())).isTrue();
        // GetPreferredAllocation made kubelet take a replica of the scheduler's GPU, not the first free one.
        assertThat(result.containers().get(0).deviceIds()).containsExactly(GPU_B + "-0");
        ContainerAllocateResponse answer = result.containers().get(0).response().getContainerResponses(0);
        Map<String, String> envs = answer.getEnvsMap();
        assertThat(envs).containsOnlyKeys("NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_MEMORY_LIMIT_0",
                "CUDA_DEVICE_SM_LIMIT", "CUDA_DEVICE_MEMORY_SHARED_CACHE");
        assertThat(envs).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_B).containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0",
                "10000m").containsEntry("CUDA_DEVICE_SM_LIMIT", "30");
        assertThat(envs.get("CUDA_DEVICE_MEMORY_SHARED_CACHE"))
                .matches("/usr/local/vgpu/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.cache");
        assertThat(answer.getMountsList()).extracting(Mount::getContainerPath, Mount::getHostPath,
                Mount::getReadOnly).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("/usr/local/vgpu/libvgpu.so", "/usr/local/vgpu/libvgpu.so",
                                true),
                        org.assertj.core.groups.Tuple.tuple("/usr/local/vgpu", "/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_cuda",
                                false),
                        org.assertj.core.groups.Tuple.tuple("/tmp/vgpulock", "/tmp/vgpulock", false),
                        org.assertj.core.groups.Tuple.tuple("/etc/ld.so.preload", "/usr/local/vgpu/ld.so.preload",
                                true));
        assertThat(answer.getDevicesCount()).isZero();

        // The entry is erased, the pod allocated, its lock released; -allocated stays for the scheduler.
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_ALLOCATED)).isEqualTo(GPU_B + ",NVIDIA,10000,30:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).singleElement().satisfies(e -> {
            assertThat(e.getType()).isEqualTo("Normal");
            assertThat(e.getInvolvedObject().getName()).isEqualTo("p1");
            assertThat(e.getMessage()).isEqualTo("allocated devices [" + GPU_B + "] on node worker-1");
        });
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("released hami.io/mutex.lock \"2025-06-01T10:00:00Z,team-a,p1\": allocated"
                + " (allocation of team-a/p1 completed)"));
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "success")).isEqualTo(1);
        assertThat(cluster.lockReleases(ReleaseReason.ALLOCATED)).isEqualTo(1);
        // HAMi-core's host directories, as HAMi creates them.
        Path cache = hostRoot.resolve("usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_cuda");
        assertThat(cache).isDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cache))).isEqualTo("rwxrwxrwx");
        assertThat(hostRoot.resolve("tmp/vgpulock")).isDirectory();
    }

    @Test
    void aMultiContainerPodIsAllocatedOneEntryPerCallAndUnlockedAfterTheLast() throws Exception {
        Pod pod = bound("p1", GPU_A + ",NVIDIA,2000,20:;" + GPU_B + ",NVIDIA,3000,30:" + GPU_A + ",NVIDIA,3000,30:;", List.of(),
                List.of("first", "second"), true);

        ContainerAllocateResponse first = kubeletPlugin().allocate(List.of(GPU_A + "-0")).getContainerResponses(0);
        assertThat(first.getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_A)
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "2000m");
        assertThat(first.getMounts(1).getHostPath()).isEqualTo("/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_first");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE))
                .isEqualTo(";" + GPU_B + ",NVIDIA,3000,30:" + GPU_A + ",NVIDIA,3000,30:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.lock()).as("held until the last container").isEqualTo("2025-06-01T10:00:00Z,team-a,p1");

        ContainerAllocateResponse second = kubeletPlugin().allocate(List.of(GPU_A + "-1", GPU_B + "-1"))
                .getContainerResponses(0);
        assertThat(second.getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_B + "," + GPU_A)
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "3000m").containsEntry("CUDA_DEVICE_MEMORY_LIMIT_1",
                        "3000m").containsEntry("CUDA_DEVICE_SM_LIMIT", "30");
        assertThat(second.getMounts(1).getHostPath()).isEqualTo("/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_second");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
    }

    /** HAMi #2899: the init container without a GPU keeps its empty entry; the GPU goes to the right container. */
    @Test
    void initContainersComeFirstAndEmptyEntriesKeepTheirPlace() {
        Pod pod = bound("p1", ";" + GPU_A + ",NVIDIA,4096,50:;", List.of("setup"), List.of("main"), true);

        KubeletStandIn.PodResult result = kubelet.admitPod(RESOURCE, pod.getMetadata().getUid(),
                List.of(new ContainerRequest("setup", 0), new ContainerRequest("main", 1)));

        assertThat(result.admitted()).as(String.valueOf(result.error())).isTrue();
        ContainerAllocateResponse main = result.containers().get(0).response().getContainerResponses(0);
        assertThat(main.getMounts(1).getHostPath()).isEqualTo("/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_main");
        assertThat(main.getEnvsMap()).containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "4096m");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
    }

    @Test
    void anInitContainerWithAGpuIsAllocatedBeforeTheOthers() {
        Pod pod = bound("p1", GPU_A + ",NVIDIA,1024,10:;" + GPU_B + ",NVIDIA,8192,80:;", List.of("warmup"),
                List.of("serve"), true);

        KubeletStandIn.PodResult result = kubelet.admitPod(RESOURCE, pod.getMetadata().getUid(),
                List.of(new ContainerRequest("warmup", 1), new ContainerRequest("serve", 1)));

        assertThat(result.admitted()).as(String.valueOf(result.error())).isTrue();
        assertThat(result.containers()).extracting(c -> c.response().getContainerResponses(0).getMounts(1)
                .getHostPath()).containsExactly("/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_warmup",
                "/usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_serve");
        assertThat(result.containers()).extracting(c -> c.deviceIds().get(0)).containsExactly(GPU_A + "-0",
                GPU_B + "-0");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
    }

    @Test
    void aWrongDeviceCountFailsThePodReleasesItsLockAndWarns() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0", GPU_A + "-1")));

        assertThat(error).hasMessage("UNKNOWN: device number not matched");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE))
                .as("nothing handed out, nothing erased").isEqualTo(GPU_A + ",NVIDIA,1000,10:;");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).singleElement().satisfies(e -> {
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getInvolvedObject().getName()).isEqualTo("p1");
            assertThat(e.getMessage()).isEqualTo("device number not matched (container cuda of team-a/p1: entry 0"
                    + " names 1 device(s), kubelet allocated 2 [" + GPU_A + "-0, " + GPU_A + "-1])");
        });
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "failed")).isEqualTo(1);
        assertThat(cluster.lockReleases(ReleaseReason.FAILED)).isEqualTo(1);
    }

    /** The lock's holder is still binding: this call is for another pod; nothing of either is touched. */
    @Test
    void anotherPodsLockAndDevicesAreNeverTouched() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), false);
        client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p2").withNamespace(NS)
                .withAnnotations(Map.of(Annotations.POD_VGPU_NODE, NODE, Annotations.POD_DEVICES_TO_ALLOCATE,
                        GPU_B + ",NVIDIA,5000,50:;", Annotations.POD_BIND_PHASE, "allocating")).endMetadata()
                .withNewSpec().addToContainers(container("cuda")).endSpec().build()).create();
        String p2Lock = LOCKED_AT + ",team-a,p2";
        cluster.setLock(p2Lock);

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0")));

        assertThat(error).hasMessage("UNKNOWN: pod team-a/p2 named by hami.io/mutex.lock is not bound to node"
                + " worker-1 yet (its Bind is in progress): this Allocate is for another pod");
        assertThat(cluster.lock()).isEqualTo(p2Lock);
        assertThat(cluster.annotation("p2", Annotations.POD_DEVICES_TO_ALLOCATE))
                .isEqualTo(GPU_B + ",NVIDIA,5000,50:;");
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).isEmpty();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    @Test
    void aFailedPodsReleaseLeavesAnotherPodsLock() {
        // p1 is found without a lock (a legacy bare-time lock names nobody), and fails.
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), false);
        cluster.setLock(LOCKED_AT.toString());

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0", GPU_A + "-1")));

        assertThat(error).hasMessage("UNKNOWN: device number not matched");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
        assertThat(cluster.lock()).as("not p1's").isEqualTo(LOCKED_AT.toString());
    }

    @Test
    void withoutAPodToAllocateKubeletGetsHamisErrorAndNothingIsWritten() {
        bound("done", ";", List.of(), List.of("cuda"), false);
        client.pods().inNamespace(NS).withName("done").patch(PatchContext.of(PatchType.JSON_MERGE),
                HamiClusterView.metadataPatch(Map.of(Annotations.POD_BIND_PHASE, "failed")));
        String version = client.pods().inNamespace(NS).withName("done").get().getMetadata().getResourceVersion();

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0")));

        assertThat(error).hasMessage("UNKNOWN: no binding pod found on node worker-1");
        assertThat(client.pods().inNamespace(NS).withName("done").get().getMetadata().getResourceVersion())
                .isEqualTo(version);
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    @Test
    void withoutALockThePendingPodIsFound() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), false);

        ContainerAllocateResponse answer = kubeletPlugin().allocate(List.of(GPU_A + "-3")).getContainerResponses(0);

        assertThat(answer.getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_A);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"2025-06-01T10:00:00Z", "2025-06-01T10:00:00.123456789Z"})
    void theLockIsReadWithSecondsOrNanoseconds(String lockedAt) {
        // HAMi v2.10 and earlier write RFC3339 seconds, later releases RFC3339 with nanoseconds.
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), false);
        bound("p2", GPU_B + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), false);
        String lock = lockedAt + "," + NS + ",p2";
        cluster.setLock(lock);

        ContainerAllocateResponse answer = kubeletPlugin().allocate(List.of(GPU_B + "-0")).getContainerResponses(0);

        // The lock's holder is served, not the first pending pod, and its lock is released.
        assertThat(answer.getEnvsMap()).containsEntry("NVIDIA_VISIBLE_DEVICES", GPU_B);
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("released hami.io/mutex.lock \"" + lock + "\": allocated"
                + " (allocation of team-a/p2 completed)"));
    }

    @Test
    void anAllocatedLockHolderIsNotFailedByALateCall() {
        bound("p1", ";", List.of(), List.of("cuda"), true);
        client.pods().inNamespace(NS).withName("p1").patch(PatchContext.of(PatchType.JSON_MERGE),
                HamiClusterView.metadataPatch(Map.of(Annotations.POD_BIND_PHASE, "success")));

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0")));

        assertThat(error).hasMessage("UNKNOWN: device request not found");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    @Test
    void aConflictOnTheEraseIsReReadAndAllocatedOnce() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        server.expect().patch().withPath("/api/v1/namespaces/team-a/pods/p1")
                .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict").withStatus("Failure")
                        .build()).once();

        kubeletPlugin().allocate(List.of(GPU_A + "-0"));

        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.lock()).isNull();
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "success")).isEqualTo(1);
    }

    @Test
    void serverErrorsOnTheReleaseAreRetriedWithHamisBackoff() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        server.expect().patch().withPath("/api/v1/nodes/worker-1")
                .andReturn(500, new StatusBuilder().withCode(500).withReason("InternalError").withStatus("Failure")
                        .build()).times(2);

        kubeletPlugin().allocate(List.of(GPU_A + "-0"));

        assertThat(cluster.lock()).isNull();
        assertThat(cluster.lockReleases(ReleaseReason.ALLOCATED)).isEqualTo(1);
    }

    // ---------------------------------------------------------------- failures the API did not take

    /**
     * The API takes no write while Allocate fails the pod, and heals once the allocator has retried: written soon
     * after the heal (well within the ceiling; HAMi's lock expiry, 5 minutes, is what this must not wait for).
     */
    @Test
    void aFailureTheApiDidNotTakeIsWrittenWithinSecondsOfTheHeal() throws Exception {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        outage.writesDown();

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0", GPU_A + "-1")));

        assertThat(error).hasMessage("UNKNOWN: device number not matched");
        assertThat(allocator.pendingFailures()).containsExactly("team-a/p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "deferred")).isEqualTo(1);

        // The outage lasts until the allocator has retried (not a fixed time the machine's speed could outrun).
        await().atMost(WAIT).until(() -> cluster.counter("tenant_gateway_allocation_bookkeeping", "result",
                "retried") > 0);
        long healedAt = System.nanoTime();
        outage.heal();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("failed");
            assertThat(cluster.lock()).isNull();
            assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).singleElement().satisfies(e -> {
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getMessage()).startsWith("device number not matched (container cuda of team-a/p1");
            });
        });
        System.out.println("HamiAllocatorIT: heal to written and released: "
                + Duration.ofNanos(System.nanoTime() - healedAt).toMillis() + " ms");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(allocator.pendingFailures()).isEmpty(); // right after the last write
            assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "written")).isEqualTo(1);
        });
        assertThat(cluster.counter("tenant_gateway_allocations", "result", "failed")).isEqualTo(1);
        assertThat(cluster.lockReleases(ReleaseReason.FAILED)).isEqualTo(1);
    }

    /** A pod deleted while its failure waits: dropped, and the lock is left to the lock controller's reaper. */
    @Test
    void aFailureOfAPodDeletedMeanwhileIsDropped() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        // Pod and Event writes fail; the test's DELETE goes through.
        outage.failing = request -> !"GET".equals(request.getMethod()) && !"DELETE".equals(request.getMethod());
        org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0", GPU_A + "-1")));
        assertThat(allocator.pendingFailures()).containsExactly("team-a/p1");

        client.pods().inNamespace(NS).withName("p1").withGracePeriod(0).delete();

        await().atMost(WAIT).until(() -> allocator.pendingFailures().isEmpty());
        assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "dropped")).isEqualTo(1);
        assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "written")).isZero();
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    /** The lock no longer names the pod (the scheduler moved on): nothing is written for it. */
    @Test
    void aFailureWhoseLockWentToAnotherPodIsDropped() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        outage.failing = request -> !"GET".equals(request.getMethod()) && request.getPath().contains("/pods/");
        org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0", GPU_A + "-1")));
        assertThat(allocator.pendingFailures()).containsExactly("team-a/p1");
        String p2Lock = LOCKED_AT.plusSeconds(400) + ",team-a,p2";
        cluster.setLock(p2Lock);

        await().atMost(WAIT).until(() -> allocator.pendingFailures().isEmpty());
        outage.heal();
        assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "dropped")).isEqualTo(1);
        assertThat(cluster.lock()).isEqualTo(p2Lock);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
    }

    /** A failure from before any pod was read is never pinned on a pod bound after it. */
    @Test
    void aFailureBeforeThePodWasReadIsNotPinnedOnAPodBoundAfterIt() {
        bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
        client.pods().inNamespace(NS).withName("p1").patch(PatchContext.of(PatchType.JSON_MERGE),
                HamiClusterView.metadataPatch(Map.of(Annotations.POD_BIND_TIME,
                        Long.toString(LOCKED_AT.getEpochSecond() + 60))));
        outage.failing = request -> true;

        Throwable error = org.assertj.core.api.Assertions.catchThrowable(() -> kubeletPlugin().allocate(
                List.of(GPU_A + "-0")));

        assertThat(error).hasMessageStartingWith("UNKNOWN: cannot find the pod to allocate on node worker-1: the API"
                + " answered HTTP 500");
        assertThat(allocator.pendingFailures()).containsExactly(FailureBookkeeping.UNATTRIBUTED);
        outage.heal();
        await().atMost(WAIT).until(() -> allocator.pendingFailures().isEmpty());
        assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "dropped")).isEqualTo(1);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.lock()).isEqualTo(LOCKED_AT + ",team-a,p1");
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).isEmpty();
    }

    /** The pending set is a count of pods: beyond it a failure is counted and logged, not kept. */
    @Test
    void beyondThePendingLimitAFailureIsCountedNotKept() {
        AllocatorConfig config = AllocatorConfig.defaults(NODE).withHostRoot(hostRoot).withPodFieldSelector(false)
                .withFailureRetry(AllocatorConfig.DEFAULT_FAILURE_RETRY, 1);
        try (HamiAllocator small = new HamiAllocator(client, config, () -> java.util.Set.of(GPU_A, GPU_B), metrics,
                Clock.fixed(LOCKED_AT.plusSeconds(2), ZoneOffset.UTC))) {
            small.start();
            bound("p1", GPU_A + ",NVIDIA,1000,10:;", List.of(), List.of("cuda"), true);
            // Pod writes fail; the node (the test's lock changes) still answers.
            outage.failing = request -> !"GET".equals(request.getMethod()) && request.getPath().contains("/pods/");
            org.assertj.core.api.Assertions.catchThrowable(() -> small.allocate(List.of(GPU_A + "-0", GPU_A + "-1")));
            // Then nothing answers: the next failure (its pod unread) finds the set full.
            outage.failing = request -> true;
            org.assertj.core.api.Assertions.catchThrowable(() -> small.allocate(List.of(GPU_B + "-0")));

            assertThat(small.pendingFailures()).containsExactly("team-a/p1");
            assertThat(cluster.counter("tenant_gateway_allocation_bookkeeping", "result", "overflow")).isEqualTo(1);
        }
    }
}
