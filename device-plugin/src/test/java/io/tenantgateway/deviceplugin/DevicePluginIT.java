package io.tenantgateway.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot.Phase;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.Mount;
import io.tenantgateway.deviceplugin.testing.ForeignDevicePlugin;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn.ContainerRequest;
import io.tenantgateway.deviceplugin.v1beta1.AllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.Device;
import io.tenantgateway.deviceplugin.v1beta1.RegisterRequest;
import io.tenantgateway.deviceplugin.policy.VirtualDevice;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin against the kubelet stand-in over real Unix sockets: registration, ListAndWatch, kubelet restarts,
 * a deleted socket, another plugin on the socket, and Allocate handed to the allocator one call at a time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DevicePluginIT {
    static final String GPU_A = "GPU-24aa1c7c-9a3b-4e51-8b8f-1d3b0f0e2a11";
    static final String GPU_B = "GPU-9b90c3e0-7f5d-4a3e-9c1b-2e4f6a8b0c22";
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final List<String> asideReasons = new CopyOnWriteArrayList<>();
    private final RecordingAllocator allocator = new RecordingAllocator();
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
    }

    static GpuDevice gpu(String uuid, int index, int split, boolean healthy) {
        return new GpuDevice(uuid, index, split, 23034, 100, "NVIDIA L4", index, "hami-core", healthy);
    }

    private KubeletStandIn kubelet() {
        KubeletStandIn kubelet = KubeletStandIn.start(dir);
        cleanup.add(kubelet);
        return kubelet;
    }

    private DevicePluginConfig config() {
        // A long check interval: what happens here happens on file events (inotify), not on the periodic check.
        return DevicePluginConfig.of(dir, "nvidia.com/gpu").withCheckInterval(Duration.ofMinutes(5))
                .withRetry(Backoff.exponential(Duration.ofMillis(50)).withCap(Duration.ofMillis(200)));
    }

    private DevicePlugin plugin(DevicePluginConfig config) {
        DevicePlugin plugin = new DevicePlugin(config, allocator, registry, asideReasons::add, "9.9.9-test",
                Clock.systemUTC());
        cleanup.add(plugin);
        return plugin;
    }

    private static KubeletStandIn.Plugin registered(KubeletStandIn kubelet) {
        return kubelet.plugin("nvidia.com/gpu").orElseThrow(() -> new AssertionError("not registered"));
    }

    @Test
    void registersWithKubeletAndListsTheSplitCountOfReplicasPerGpu() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 3, true), gpu(GPU_B, 1, 3, true)));
        plugin.start();

        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").map(p -> p.devices().size() == 6)
                .orElse(false));
        RegisterRequest registration = kubelet.registrations().get(0);
        assertThat(registration.getVersion()).isEqualTo("v1beta1");
        assertThat(registration.getEndpoint()).isEqualTo("nvidia-gpu.sock");
        assertThat(registration.getResourceName()).isEqualTo("nvidia.com/gpu");
        assertThat(registration.getOptions().getGetPreferredAllocationAvailable()).isTrue();
        assertThat(registration.getOptions().getPreStartRequired()).isFalse();
        assertThat(registered(kubelet).options().getGetPreferredAllocationAvailable()).isTrue();
        assertThat(registered(kubelet).devices()).extracting(Device::getID).containsExactly(GPU_A + "-0", GPU_A + "-1",
                GPU_A + "-2", GPU_B + "-0", GPU_B + "-1", GPU_B + "-2");
        assertThat(registered(kubelet).streamEnd()).isNull();
        assertThat(registered(kubelet).devices()).allSatisfy(d -> {
            assertThat(d.getHealth()).isEqualTo("Healthy");
            assertThat(d.hasTopology()).isFalse();
        });
        assertThat(Files.exists(dir.resolve("nvidia-gpu.sock"))).isTrue();
        DevicePluginSnapshot snapshot = plugin.snapshot();
        assertThat(snapshot.phase()).isEqualTo(Phase.REGISTERED);
        assertThat(snapshot.devices()).isEqualTo(6);
        assertThat(snapshot.healthy()).isEqualTo(6);
        assertThat(snapshot.registrations()).isEqualTo(1);
        assertThat(counter("tenant_gateway_device_plugin_registrations_total", "success")).isEqualTo(1);
        assertThat(gauge("tenant_gateway_device_plugin_devices", "Healthy")).isEqualTo(6);
    }

    @Test
    void topologyIsSentWhenConfigured() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config().withNumaTopology(true));
        plugin.start();
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 1, true), gpu(GPU_B, 1, 1, true)));

        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").map(p -> p.devices().size() == 2)
                .orElse(false));
        assertThat(registered(kubelet).devices()).extracting(d -> d.getTopology().getNodes(0).getID())
                .containsExactly(0L, 1L);
    }

    @Test
    void healthChangesAreSentAgain() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.start();
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true), gpu(GPU_B, 1, 2, true)));
        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").map(p -> p.healthyIds().size() == 4)
                .orElse(false));
        int updates = registered(kubelet).updates();

        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true), gpu(GPU_B, 1, 2, false)));
        await().atMost(WAIT).untilAsserted(() -> assertThat(registered(kubelet).healthyIds())
                .containsExactly(GPU_A + "-0", GPU_A + "-1"));
        assertThat(registered(kubelet).updates()).isEqualTo(updates + 1);

        // The same list again is not resent.
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true), gpu(GPU_B, 1, 2, false)));
        // A failing discovery makes every device unhealthy until the next one works.
        plugin.discoveryFailed("nvidia-smi exited with status 9");
        await().atMost(WAIT).untilAsserted(() -> assertThat(registered(kubelet).healthyIds()).isEmpty());
        assertThat(registered(kubelet).devices()).hasSize(4);
        assertThat(registered(kubelet).updates()).isEqualTo(updates + 2);
        assertThat(gauge("tenant_gateway_device_plugin_devices", "Unhealthy")).isEqualTo(4);

        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true), gpu(GPU_B, 1, 2, true)));
        await().atMost(WAIT).untilAsserted(() -> assertThat(registered(kubelet).healthyIds()).hasSize(4));
    }

    @Test
    void aKubeletRestartIsFollowedByServingAndRegisteringAgain() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true)));
        plugin.start();
        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").map(p -> p.devices().size() == 2)
                .orElse(false));

        kubelet.restart(); // deletes nvidia-gpu.sock and creates kubelet.sock anew

        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(kubelet.registrations()).hasSize(2);
            assertThat(registered(kubelet).devices()).hasSize(2);
            assertThat(registered(kubelet).streamOpen()).isTrue();
        });
        assertThat(Files.exists(dir.resolve("nvidia-gpu.sock"))).isTrue();
        assertThat(plugin.snapshot().registrations()).isEqualTo(2);
        assertThat(plugin.snapshot().phase()).isEqualTo(Phase.REGISTERED);
    }

    @Test
    void aDeletedSocketIsServedAgainAndRegistered() throws Exception {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true)));
        plugin.start();
        await().atMost(WAIT).until(() -> kubelet.registrations().size() == 1);

        Files.delete(dir.resolve("nvidia-gpu.sock"));

        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(kubelet.registrations()).hasSize(2);
            assertThat(Files.exists(dir.resolve("nvidia-gpu.sock"))).isTrue();
            assertThat(registered(kubelet).devices()).hasSize(2);
        });
        // The new socket answers (kubelet's second registration dialled it).
        AllocateResponse response = registered(kubelet).allocate(List.of(GPU_A + "-1"));
        assertThat(response.getContainerResponses(0).getEnvsMap()).containsEntry("ALLOCATED", GPU_A + "-1");
    }

    @Test
    void waitsForKubeletAndRegistersWhenItsSocketAppears() {
        DevicePlugin plugin = plugin(config());
        plugin.start();
        await().atMost(WAIT).until(() -> plugin.snapshot().detail().contains("waiting for kubelet"));
        assertThat(plugin.snapshot().phase()).isEqualTo(Phase.WAITING_FOR_KUBELET);
        assertThat(Files.exists(dir.resolve("nvidia-gpu.sock"))).as("served before kubelet is there").isTrue();

        KubeletStandIn kubelet = kubelet();

        await().atMost(WAIT).until(() -> plugin.snapshot().phase() == Phase.REGISTERED);
        assertThat(kubelet.registrations()).hasSize(1);
    }

    @Test
    void anotherPluginOnTheSocketKeepsThisOneFromStarting() {
        KubeletStandIn kubelet = kubelet();
        ForeignDevicePlugin foreign = new ForeignDevicePlugin(dir.resolve("nvidia-gpu.sock"));
        cleanup.add(foreign);
        DevicePlugin plugin = plugin(config());

        plugin.start();

        DevicePluginSnapshot snapshot = plugin.snapshot();
        assertThat(snapshot.phase()).isEqualTo(Phase.STANDING_ASIDE);
        assertThat(snapshot.detail()).isEqualTo(dir.resolve("nvidia-gpu.sock") + " is served by another device"
                + " plugin (HAMi's or NVIDIA's: GetDevicePluginOptions answered pre_start_required=false,"
                + " get_preferred_allocation_available=true)");
        assertThat(asideReasons).containsExactly(snapshot.detail());
        assertThat(gauge("tenant_gateway_device_plugin_standing_aside", null)).isEqualTo(1);
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true)));
        plugin.close();
        assertThat(kubelet.registrations()).isEmpty();
        // The other plugin's socket is untouched and still answers.
        assertThat(SocketProbe.probe(dir.resolve("nvidia-gpu.sock"), foreign.group(), WAIT).kind())
                .isEqualTo(SocketProbe.Kind.FOREIGN);
    }

    @Test
    void aStaleSocketFileIsReplaced() throws Exception {
        Files.writeString(dir.resolve("nvidia-gpu.sock"), "left over");
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());

        plugin.start();

        await().atMost(WAIT).until(() -> kubelet.registrations().size() == 1);
        assertThat(SocketProbe.probe(dir.resolve("nvidia-gpu.sock"), foreignGroup(), WAIT))
                .isEqualTo(new SocketProbe.Result(SocketProbe.Kind.OURS, dir.resolve("nvidia-gpu.sock")
                        + " is served by tenant-gateway 9.9.9-test"));
    }

    @Test
    void kubeletsAllocateGoesToTheAllocatorAndItsErrorBackToKubelet() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 2, true), gpu(GPU_B, 1, 2, true)));
        plugin.start();
        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").map(p -> p.devices().size() == 4)
                .orElse(false));
        allocator.prefer = List.of(GPU_B + "-1");

        KubeletStandIn.PodResult pod = kubelet.admitPod("nvidia.com/gpu", "uid-1", List.of(
                new ContainerRequest("init", 0), new ContainerRequest("cuda", 1)));

        assertThat(pod.admitted()).isTrue();
        assertThat(pod.containers()).singleElement().satisfies(c -> {
            assertThat(c.container()).isEqualTo("cuda");
            assertThat(c.deviceIds()).containsExactly(GPU_B + "-1");
            assertThat(c.response().getContainerResponses(0).getEnvsMap()).containsEntry("ALLOCATED", GPU_B + "-1");
            assertThat(c.response().getContainerResponses(0).getMounts(0).getHostPath()).isEqualTo("/host/x");
            assertThat(c.response().getContainerResponses(0).getMounts(0).getReadOnly()).isTrue();
        });
        assertThat(allocator.calls).containsExactly(List.of(GPU_B + "-1"));

        allocator.fail = "device number not matched";
        KubeletStandIn.PodResult refused = kubelet.admitPod("nvidia.com/gpu", "uid-2",
                List.of(new ContainerRequest("cuda", 1)));
        assertThat(refused.error()).contains("device number not matched");
        assertThat(counter("tenant_gateway_device_plugin_allocate_total", "ok")).isEqualTo(1);
        assertThat(counter("tenant_gateway_device_plugin_allocate_total", "error")).isEqualTo(1);
    }

    @Test
    void allocationsRunOneAtATime() throws Exception {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin plugin = plugin(config());
        plugin.updateDevices(List.of(gpu(GPU_A, 0, 4, true)));
        plugin.start();
        await().atMost(WAIT).until(() -> kubelet.plugin("nvidia.com/gpu").isPresent());
        allocator.gate = new CountDownLatch(1);
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try {
            Future<AllocateResponse> first = callers.submit(() -> registered(kubelet).allocate(List.of(GPU_A + "-0")));
            Future<AllocateResponse> second = callers.submit(() -> registered(kubelet).allocate(List.of(GPU_A + "-1")));
            await().atMost(WAIT).until(() -> allocator.inside.get() == 1);
            assertThat(allocator.calls).hasSize(1); // the second waits behind the first
            allocator.gate.countDown();
            first.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            callers.shutdownNow();
        }
        assertThat(allocator.calls).hasSize(2);
        assertThat(allocator.maxInside.get()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- simulated vendors

    private static final NodeVendor ASCEND = NodeVendor.ascend("Ascend910B4");
    private static final String NPU = "1A2B3C4D-00000000-11111111-22222222-33333333";

    /** A simulated vendor's plugin, on a registry of its own (as the agent keeps them). */
    private DevicePlugin vendorPlugin(NodeVendor vendor, List<String> aside) {
        DevicePluginConfig config = DevicePluginConfig.forVendor(dir, vendor).withTimingOf(config());
        DevicePlugin plugin = new DevicePlugin(config, allocator, new PrometheusRegistry(), aside::add, "9.9.9-test",
                Clock.systemUTC());
        cleanup.add(plugin);
        return plugin;
    }

    @Test
    void eachVendorServesItsOwnSocketNextToNvidiasAndListsItsReplicas() {
        KubeletStandIn kubelet = kubelet();
        DevicePlugin nvidia = plugin(config());
        nvidia.updateDevices(List.of(gpu(GPU_A, 0, 2, true)));
        DevicePlugin hygon = vendorPlugin(NodeVendor.HYGON, asideReasons);
        hygon.updateVirtualDevices(List.of(new VirtualDevice("DCU-ABC123-fake-0", "DCU-ABC123", true,
                OptionalInt.empty()), new VirtualDevice("DCU-ABC123-fake-1", "DCU-ABC123", true, OptionalInt.empty())));
        DevicePlugin ascend = vendorPlugin(ASCEND, asideReasons);
        ascend.updateVirtualDevices(List.of(new VirtualDevice(NPU + "-0", NPU, false, OptionalInt.empty())));
        nvidia.start();
        hygon.start();
        ascend.start();

        await().atMost(WAIT).until(() -> kubelet.registrations().size() == 3
                && kubelet.plugin("huawei.com/Ascend910B4").map(p -> p.devices().size() == 1).orElse(false)
                && kubelet.plugin("hygon.com/dcunum").map(p -> p.devices().size() == 2).orElse(false));
        assertThat(kubelet.registrations()).extracting(RegisterRequest::getResourceName, RegisterRequest::getEndpoint,
                r -> r.getOptions().getGetPreferredAllocationAvailable()).containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("nvidia.com/gpu", "nvidia-gpu.sock", true),
                        org.assertj.core.groups.Tuple.tuple("hygon.com/dcunum", "hygon.com_dcunum", false),
                        org.assertj.core.groups.Tuple.tuple("huawei.com/Ascend910B4", "Ascend910B4.sock", false));
        assertThat(kubelet.plugin("hygon.com/dcunum").orElseThrow().healthyIds()).containsExactly(
                "DCU-ABC123-fake-0", "DCU-ABC123-fake-1");
        assertThat(kubelet.plugin("huawei.com/Ascend910B4").orElseThrow().devices()).extracting(Device::getID,
                Device::getHealth).containsExactly(org.assertj.core.groups.Tuple.tuple(NPU + "-0", "Unhealthy"));
        assertThat(dir.resolve("hygon.com_dcunum")).exists();
        assertThat(dir.resolve("Ascend910B4.sock")).exists();
        assertThat(hygon.gpuUuids()).containsExactly("DCU-ABC123");
        assertThat(asideReasons).isEmpty();
    }

    /** A vendor's own plugin on its socket: only that vendor's simulated plugin stands aside. */
    @Test
    void aVendorsOwnPluginOnItsSocketSetsOnlyThatVendorAside() {
        KubeletStandIn kubelet = kubelet();
        ForeignDevicePlugin foreign = new ForeignDevicePlugin(dir.resolve("Ascend910B4.sock"));
        cleanup.add(foreign);
        List<String> ascendAside = new CopyOnWriteArrayList<>();
        DevicePlugin ascend = vendorPlugin(ASCEND, ascendAside);
        DevicePlugin hygon = vendorPlugin(NodeVendor.HYGON, asideReasons);

        ascend.start();
        hygon.start();

        assertThat(ascend.snapshot().phase()).isEqualTo(Phase.STANDING_ASIDE);
        assertThat(ascendAside).containsExactly(dir.resolve("Ascend910B4.sock") + " is served by another device"
                + " plugin (GetDevicePluginOptions answered pre_start_required=false,"
                + " get_preferred_allocation_available=true)");
        await().atMost(WAIT).until(() -> hygon.snapshot().phase() == Phase.REGISTERED);
        assertThat(kubelet.registrations()).extracting(RegisterRequest::getResourceName)
                .containsExactly("hygon.com/dcunum");
        assertThat(asideReasons).isEmpty();
    }

    @Test
    void aVendorSocketNameMustBeAFileNameOfItsOwn() {
        NodeVendor odd = new NodeVendor(NodeVendor.Kind.HYGON, "DCU", "hygon.com/dcunum", "m", "c", "r",
                io.tenantgateway.hami.RegisterFormat.LEGACY_TEXT, "h", "t", "a", "kubelet.sock");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DevicePluginConfig.forVendor(dir, odd))
                .hasMessage("socketName: kubelet.sock (expected: a file name in the directory, not hidden and not"
                        + " kubelet.sock)");
    }

    private EventLoopGroup foreignGroup() {
        EventLoopGroup group = UnixSockets.newGroup(1, "test-probe");
        cleanup.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly());
        return group;
    }

    private double counter(String name, String result) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getPrometheusName().equals(
                name.replace("_total", ""))).map(CounterSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream())
                .filter(d -> result.equals(d.getLabels().get("result"))).mapToDouble(d -> d.getValue()).sum();
    }

    private double gauge(String name, String health) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getPrometheusName().equals(name))
                .map(GaugeSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream())
                .filter(d -> health == null || health.equals(d.getLabels().get("health")))
                .mapToDouble(d -> d.getValue()).sum();
    }

    /** Records the calls; answers with the IDs it got, or fails as told. */
    static final class RecordingAllocator implements Allocator {
        final List<List<String>> calls = new CopyOnWriteArrayList<>();
        volatile String fail;
        volatile List<String> prefer;
        volatile CountDownLatch gate;
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxInside = new AtomicInteger();

        @Override
        public ContainerAllocation allocate(List<String> deviceIds) throws AllocationException {
            int now = inside.incrementAndGet();
            maxInside.accumulateAndGet(now, Math::max);
            try {
                calls.add(List.copyOf(deviceIds));
                CountDownLatch wait = gate;
                if (wait != null && !wait.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new AllocationException("gate never opened");
                }
                if (fail != null) {
                    throw new AllocationException(fail);
                }
                return new ContainerAllocation(Map.of("ALLOCATED", String.join(",", deviceIds)),
                        List.of(new Mount("/x", "/host/x", true)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AllocationException("interrupted");
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public Optional<List<String>> preferred(int index, List<String> available, List<String> mustInclude,
                int size) {
            List<String> wanted = prefer;
            return wanted == null ? Optional.empty() : Optional.of(wanted);
        }
    }
}
