package io.tenantgateway.agent.devices;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.testing.MutableClock;
import io.tenantgateway.agent.testing.Quantities;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.agent.devices.DeviceRegistrarIT.RecordingDispatcher.Seen;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The registrar against fabric8's mock API server in CRUD mode (a real HTTP server on loopback);
 * failures are injected with the server's expectations, which take precedence over CRUD.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceRegistrarIT {

    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

    private KubernetesMockServer server;
    private RecordingDispatcher dispatcher;
    private KubernetesClient client;
    private KubernetesClient admin;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final MutableClock clock = new MutableClock(T0);
    private final List<DeviceRegistrar> registrars = new ArrayList<>();

    @BeforeEach
    void startApiServer() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        dispatcher = new RecordingDispatcher(new KubernetesMixedDispatcher(responses));
        server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        admin = server.createClient();
        client = registrarClient(WAIT);
    }

    /** The registrar's own client: no hidden client-side retries, so every API error reaches it. */
    private KubernetesClient registrarClient(Duration requestTimeout) {
        Config config = new ConfigBuilder(admin.getConfiguration())
                .withRequestRetryBackoffLimit(0)
                .withRequestTimeout((int) requestTimeout.toMillis())
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    @AfterEach
    void stopAll() {
        registrars.forEach(DeviceRegistrar::close);
        client.close();
        admin.close();
        server.destroy();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "tenant-a-worker | A100-80GB | 10 | 81920 | 100 | 100",
        "tenant-b-worker | L4-24GB:2 | 20 | 46068 | 200 | 200",
    })
    void labInventoryIsRegisteredByteForByteWithHandshakeAndCapacity(String node, String gpus, String gpu,
                                                                     String gpumem, String gpucores, String percentage) {
        createNode(node);
        MockInventory inventory = MockInventory.parseShorthand(gpus);
        DeviceRegistrar registrar = start(DeviceRegistrationConfig.builder(node).mock(inventory).build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());

        String expected = node.equals("tenant-a-worker") ? MockDeviceSourceTest.TENANT_A : MockDeviceSourceTest.TENANT_B;
        List<GpuDevice> devices = new MockDeviceSource(node, inventory, 10).discover();
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(expected);
        assertThat(HamiDeviceCodec.decode(annotation(node, Annotations.NODE_NVIDIA_REGISTER))).isEqualTo(devices);
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:00");
        Map<String, String> quantities = Map.of("nvidia.com/gpu", gpu, "nvidia.com/gpumem", gpumem,
                "nvidia.com/gpucores", gpucores, "nvidia.com/gpumem-percentage", percentage);
        assertThat(quantities(admin.nodes().withName(node).get().getStatus().getCapacity())).containsAllEntriesOf(quantities);
        assertThat(quantities(admin.nodes().withName(node).get().getStatus().getAllocatable())).containsAllEntriesOf(quantities);
        assertThat(dispatcher.seen).anySatisfy(r -> {
            assertThat(r.method()).isEqualTo("PATCH");
            assertThat(r.path()).isEqualTo("/api/v1/nodes/" + node + "/status");
            assertThat(r.contentType()).startsWith("application/merge-patch+json");
            assertThat(r.body()).isEqualTo("{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"" + gpu + "\",\"nvidia.com/gpumem\":\""
                    + gpumem + "\",\"nvidia.com/gpucores\":\"" + gpucores + "\",\"nvidia.com/gpumem-percentage\":\""
                    + percentage + "\"},\"allocatable\":{\"nvidia.com/gpu\":\"" + gpu + "\",\"nvidia.com/gpumem\":\"" + gpumem
                    + "\",\"nvidia.com/gpucores\":\"" + gpucores + "\",\"nvidia.com/gpumem-percentage\":\"" + percentage + "\"}}}");
        });
        assertThat(registrar.registeredDeviceIds()).containsExactlyInAnyOrderElementsOf(
                devices.stream().map(GpuDevice::id).toList());
        assertThat(registrar.snapshot().registerAnnotation()).isEqualTo(expected);
        String metrics = scrape();
        assertThat(metrics).contains("tenant_gateway_devices_registered " + devices.size() + ".0\n");
        assertThat(metrics).contains("tenant_gateway_handshake_age_seconds 0.0\n");
        assertThat(metrics).contains("tenant_gateway_device_registration_failures_total{reason=\"conflict\"} 0.0\n");
    }

    @Test
    void handshakeIsRefreshedOnCadenceAndRewrittenAfterDeletionWhileRegisterIsWrittenOnce() {
        String node = "tenant-b-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "L4-24GB:2")
                .handshakeInterval(Duration.ofMillis(100))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());
        await().atMost(WAIT).until(() -> "Reported 2026-03-01 10:00:00".equals(annotation(node, Annotations.NODE_HANDSHAKE)));

        clock.set(T0.plusSeconds(30));
        await().atMost(WAIT).until(() -> "Reported 2026-03-01 10:00:30".equals(annotation(node, Annotations.NODE_HANDSHAKE)));
        clock.set(T0.plusSeconds(45));
        await().atMost(WAIT).until(() -> "Reported 2026-03-01 10:00:45".equals(annotation(node, Annotations.NODE_HANDSHAKE)));

        // Someone (v2.10 scheduler on an unhealthy node, an operator) deletes the handshake.
        admin.nodes().withName(node).patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/hami.io~1node-handshake\"}]");
        clock.set(T0.plusSeconds(50));
        await().atMost(WAIT).until(() -> "Reported 2026-03-01 10:00:50".equals(annotation(node, Annotations.NODE_HANDSHAKE)));

        await().atMost(WAIT).until(() -> registrarPatches(node, "Reported ") >= 6);
        assertThat(registrarPatches(node, Annotations.NODE_NVIDIA_REGISTER))
                .as("the register annotation is patched only when its value changes").isEqualTo(1);
        assertThat(registrar.snapshot().lastHandshake()).isEqualTo(T0.plusSeconds(50));
    }

    @Test
    void schedulerRequestingWritesInBetweenAreNotFought() {
        String node = "tenant-a-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .handshakeInterval(Duration.ofSeconds(30))
                .build());
        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        int ourPatches = registrarPatches(node, "Reported ");
        String register = annotation(node, Annotations.NODE_NVIDIA_REGISTER);

        for (String stamp : List.of("10:00:15", "10:00:30", "10:00:45")) {
            admin.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"annotations\":{\"hami.io/node-handshake\":\"Requesting_2026-03-01 " + stamp + "\"}}}");
        }

        await().during(Duration.ofMillis(500)).atMost(WAIT).untilAsserted(() -> {
            assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Requesting_2026-03-01 10:00:45");
            assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(register);
        });
        assertThat(registrarPatches(node, "Reported ")).as("no extra writes in reply").isEqualTo(ourPatches);
        assertThat(registrar.devicesRegistered()).isTrue();
    }

    @Test
    void conflictOnceThenSuccess() {
        String node = "tenant-a-worker";
        createNode(node);
        server.expect().patch().withPath("/api/v1/nodes/" + node)
                .andReturn(409, new StatusBuilder().withStatus("Failure").withCode(409).withReason("Conflict")
                        .withMessage("Operation cannot be fulfilled on nodes \"" + node + "\": the object has been modified")
                        .build())
                .once();

        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB").build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MockDeviceSourceTest.TENANT_A);
        assertThat(scrape()).contains("tenant_gateway_device_registration_failures_total{reason=\"conflict\"} 1.0\n");
        assertThat(registrar.snapshot().lastFailure()).isNull();
        // Retried at once, within the same round, after re-reading the node.
        assertThat(registrarPatches(node, "Reported ")).isEqualTo(2);
    }

    @Test
    void serverErrorsBackOffThenRecover() {
        String node = "tenant-a-worker";
        createNode(node);
        server.expect().patch().withPath("/api/v1/nodes/" + node)
                .andReturn(500, new StatusBuilder().withStatus("Failure").withCode(500).withMessage("etcdserver: leader changed").build())
                .times(3);

        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MockDeviceSourceTest.TENANT_A);
        assertThat(scrape()).contains("tenant_gateway_device_registration_failures_total{reason=\"server_error\"} 3.0\n");
        assertThat(registrar.snapshot().lastError()).isNull();
    }

    @Test
    void apiTimeoutThenRecovery() {
        String node = "tenant-a-worker";
        Node created = createNode(node);
        // The first GET is never answered within the registrar's 1 s request timeout, however slow the machine.
        client.close();
        client = registrarClient(Duration.ofSeconds(1));
        server.expect().get().delay(10, TimeUnit.MINUTES).withPath("/api/v1/nodes/" + node)
                .andReturn(200, created).once();

        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        assertThat(scrape()).contains("tenant_gateway_device_registration_failures_total{reason=\"api_unreachable\"} 1.0\n");
    }

    @Test
    void nodeAbsentAtStartThenCreatedGetsRegistered() {
        String node = "tenant-b-worker";
        DeviceRegistrar registrar = start(mockGpus(node, "L4-24GB:2")
                .handshakeInterval(Duration.ofMillis(200))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).untilAsserted(() -> {
            DeviceRegistrationSnapshot snapshot = registrar.snapshot();
            assertThat(snapshot.lastFailure()).isEqualTo(FailureReason.NODE_MISSING);
            assertThat(snapshot.lastError()).isEqualTo(
                    "node tenant-b-worker not found (expected: the Node this agent runs on; check --node-name)");
            assertThat(snapshot.ready()).isFalse();
        });
        assertThat(registrar.readinessCheck().run()).isEqualTo(HealthCheck.Result.failed("node_missing: "
                + "node tenant-b-worker not found (expected: the Node this agent runs on; check --node-name)"));
        await().atMost(WAIT).until(() -> failures("node_missing") >= 2);

        createNode(node);

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MockDeviceSourceTest.TENANT_B);
        assertThat(registrar.snapshot().lastFailure()).isNull();
        assertThat(registrar.readinessCheck().run()).isEqualTo(HealthCheck.Result.OK);
    }

    @Test
    void nvidiaSmiFailureRegistersNothingShowsInReadinessAndIsRetried(@TempDir Path dir) throws IOException {
        String node = "gpu-worker-1";
        createNode(node);
        Path driverLoaded = dir.resolve("driver-loaded");
        Path smi = fakeNvidiaSmi(dir, driverLoaded);
        DeviceRegistrar registrar = start(DeviceRegistrationConfig.builder(node)
                .nvidiaSmiPath(smi)
                .sysfsRoot(dir.resolve("sys"))
                .handshakeInterval(Duration.ofMillis(200))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).until(() -> failures("driver_unavailable") >= 2);
        DeviceRegistrationSnapshot failing = registrar.snapshot();
        assertThat(failing.ready()).isFalse();
        assertThat(failing.lastFailure()).isEqualTo(FailureReason.DRIVER_UNAVAILABLE);
        assertThat(failing.lastError()).startsWith(
                "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isNull();
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isNull();

        Files.createFile(driverLoaded);

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());
        assertThat(HamiDeviceCodec.decode(annotation(node, Annotations.NODE_NVIDIA_REGISTER))).containsExactly(
                new GpuDevice("GPU-a75cda02-62ce-2c30-9150-555ef08935e2", 0, 10, 81920, 100, "NVIDIA A100-SXM4-80GB",
                        0, "hami-core", true));
        Node registered = admin.nodes().withName(node).get();
        assertThat(registered.getStatus() == null || registered.getStatus().getCapacity() == null
                || !registered.getStatus().getCapacity().containsKey("nvidia.com/gpu"))
                .as("with real GPUs the device plugin advertises capacity, not us").isTrue();
    }

    @Test
    void deregistersOnExitAndLifecycleIsIdempotent() {
        String node = "tenant-a-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .deregisterOnExit(true)
                .build());
        registrar.start();
        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());

        registrar.close();
        registrar.close();

        // A real API server deletes null-patched keys; the CRUD mock keeps them as null.
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isNull();
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isNull();
        Map<String, Quantity> capacity = admin.nodes().withName(node).get().getStatus().getCapacity();
        assertThat(capacity.get("nvidia.com/gpu")).isNull();
        assertThat(registrar.registeredDeviceIds()).isEmpty();
        assertThat(scrape()).doesNotContain("tenant_gateway_");
        assertThatThrownBy(registrar::start).isInstanceOf(IllegalStateException.class)
                .hasMessage("device registrar for node tenant-a-worker is closed");
    }

    // ------------------------------------------------------------------ Hygon and Ascend (mock mode)

    /** {@code mixed-worker}'s A100 (the NVIDIA bytes are what --mock-gpus=A100-80GB writes there). */
    private static final String MIXED_NVIDIA = "[{\"id\":\"GPU-1a8b94b9-eb16-3e7c-abd3-c4bfcaf1afa9\",\"count\":10,"
            + "\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"mode\":\"hami-core\","
            + "\"health\":true}]";
    /** {@code mixed-worker}'s DCU: DCU-DP HEAD's 9 fields, serial from SHA-256("mixed-worker/DCU/0"). */
    private static final String MIXED_DCU = "DCU-E44F96254E7633B8,4,65536,100,DCU-K100,0,true,0,hami:";
    /** {@code mixed-worker}'s two 910B4 chips: ids from SHA-256("mixed-worker/Ascend910B4/<i>"). */
    private static final String MIXED_910B4 = "[{\"id\":\"4D54085D-ED8FA879-538EC9CA-18A99273-65EB2677\",\"count\":4,"
            + "\"devmem\":32768,\"devcore\":20,\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":0}},"
            + "{\"id\":\"3155C548-CB12AF65-46D67350-C2C8CFA7-29C4B1B9\",\"index\":1,\"count\":4,\"devmem\":32768,"
            + "\"devcore\":20,\"type\":\"Ascend910B4\",\"health\":true,\"custominfo\":{\"NetworkID\":0}}]";
    private static final String B4_REGISTER = "hami.io/node-register-Ascend910B4";
    private static final String B4_HANDSHAKE = "hami.io/node-handshake-Ascend910B4";
    private static final String DCU_REGISTER = "hami.io/node-dcu-register";
    private static final String DCU_HANDSHAKE = "hami.io/node-handshake-dcu";

    @Test
    void everyVendorIsRegisteredInItsOwnKeyAndFormatInOnePatchWithItsHandshakeAndCapacity() {
        String node = "mixed-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockDevices(node, "Ascend910B4:2,DCU-K100:1,A100-80GB:1").build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());

        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MIXED_NVIDIA);
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:00");
        assertThat(annotation(node, DCU_REGISTER)).isEqualTo(MIXED_DCU);
        assertThat(annotation(node, DCU_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:00 +0000 UTC m=+0.000000000");
        assertThat(annotation(node, B4_REGISTER)).isEqualTo(MIXED_910B4);
        assertThat(annotation(node, B4_HANDSHAKE)).isEqualTo("Reported_2026.03.01 10:00:01");
        assertThat(annotation(node, "hami-vnpu-core")).isEqualTo("false");
        // HAMi v2.10's scheduler reads them back as written.
        RegisterCodec.Result dcu = RegisterCodec.decode(DCU_REGISTER, MIXED_DCU, HamiRelease.V2_10, node);
        assertThat(dcu.devices()).containsExactly(new RegisteredDevice("DCU-E44F96254E7633B8", 0, 4, 65536, 100,
                "DCU-K100", 0, "hami", true, "DCU", Map.of()));
        RegisterCodec.Result npu = RegisterCodec.decode(B4_REGISTER, MIXED_910B4, HamiRelease.V2_10, node);
        assertThat(npu.devices()).containsExactly(
                new RegisteredDevice("4D54085D-ED8FA879-538EC9CA-18A99273-65EB2677", 0, 4, 32768, 20, "Ascend910B4", 0,
                        "", true, "Ascend910B4", Map.of("NetworkID", 0L)),
                new RegisteredDevice("3155C548-CB12AF65-46D67350-C2C8CFA7-29C4B1B9", 1, 4, 32768, 20, "Ascend910B4", 0,
                        "", true, "Ascend910B4", Map.of("NetworkID", 0L)));

        // One merge patch with every key, NVIDIA's first (as on an NVIDIA node), then each vendor in inventory order.
        assertThat(dispatcher.seen).filteredOn(r -> r.method().equals("PATCH") && r.path().equals("/api/v1/nodes/" + node))
                .first().satisfies(r -> {
                    assertThat(r.contentType()).startsWith("application/merge-patch+json");
                    assertThat(r.body()).isEqualTo("{\"metadata\":{\"annotations\":{"
                            + "\"hami.io/node-nvidia-register\":" + json(MIXED_NVIDIA) + ","
                            + "\"hami.io/node-handshake\":\"Reported 2026-03-01 10:00:00\","
                            + "\"" + B4_REGISTER + "\":" + json(MIXED_910B4) + ","
                            + "\"hami-vnpu-core\":\"false\","
                            + "\"" + B4_HANDSHAKE + "\":\"Reported_2026.03.01 10:00:01\","
                            + "\"" + DCU_REGISTER + "\":\"" + MIXED_DCU + "\","
                            + "\"" + DCU_HANDSHAKE + "\":\"Reported 2026-03-01 10:00:00 +0000 UTC m=+0.000000000\"}}}");
                });
        Map<String, String> quantities = new HashMap<>(Map.of("nvidia.com/gpu", "10", "nvidia.com/gpumem", "81920",
                "nvidia.com/gpucores", "100", "nvidia.com/gpumem-percentage", "100"));
        quantities.putAll(Map.of("huawei.com/Ascend910B4", "8", "huawei.com/Ascend910B4-memory", "65536",
                "huawei.com/Ascend910B4-core", "40", "hygon.com/dcunum", "4", "hygon.com/dcumem", "65536",
                "hygon.com/dcucores", "100"));
        Node registered = admin.nodes().withName(node).get();
        assertThat(quantities(registered.getStatus().getCapacity())).containsAllEntriesOf(quantities);
        assertThat(quantities(registered.getStatus().getAllocatable())).containsAllEntriesOf(quantities);
        assertThat(dispatcher.seen).filteredOn(r -> r.path().equals("/api/v1/nodes/" + node + "/status"))
                .singleElement().satisfies(r -> assertThat(r.body()).startsWith("{\"status\":{\"capacity\":{"
                        + "\"nvidia.com/gpu\":\"10\",\"nvidia.com/gpumem\":\"81920\",\"nvidia.com/gpucores\":\"100\","
                        + "\"nvidia.com/gpumem-percentage\":\"100\",\"huawei.com/Ascend910B4\":\"8\","
                        + "\"huawei.com/Ascend910B4-memory\":\"65536\",\"huawei.com/Ascend910B4-core\":\"40\","
                        + "\"hygon.com/dcunum\":\"4\",\"hygon.com/dcumem\":\"65536\",\"hygon.com/dcucores\":\"100\"},"));

        DeviceRegistrationSnapshot snapshot = registrar.snapshot();
        assertThat(snapshot.registerAnnotation()).isEqualTo(MIXED_NVIDIA);
        assertThat(snapshot.vendors()).extracting(v -> v.vendor().registerKey(),
                DeviceRegistrationSnapshot.VendorRegistration::registerAnnotation).containsExactly(
                tuple(B4_REGISTER, MIXED_910B4), tuple(DCU_REGISTER, MIXED_DCU));
        assertThat(snapshot.ownedElsewhere()).isEmpty();
        assertThat(registrar.readinessCheck().run()).isEqualTo(HealthCheck.Result.OK);
        assertThat(scrape()).as("the gauge counts NVIDIA's GPUs, as before")
                .contains("tenant_gateway_devices_registered 1.0\n");

        // The next rounds rewrite every handshake, and no register annotation.
        clock.set(T0.plusSeconds(30));
        registrar.registerOnce();
        assertThat(annotation(node, DCU_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:30 +0000 UTC m=+30.000000000");
        assertThat(annotation(node, B4_HANDSHAKE)).isEqualTo("Reported_2026.03.01 10:00:31");
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:30");
        assertThat(registrarPatches(node, "register")).isEqualTo(1);
    }

    @Test
    void aNodeWithoutNvidiaGpusWritesNoNvidiaKeys() {
        String node = "npu-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockDevices(node, "Ascend310P").deregisterOnExit(true).build());

        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());

        assertThat(annotation(node, "hami.io/node-register-Ascend310P")).isEqualTo("[{\"id\":"
                + "\"706FC924-FD377040-89C2B47C-9775FDD3-B57B018B\",\"count\":7,\"devmem\":21527,\"devcore\":8,"
                + "\"type\":\"Ascend310P\",\"health\":true}]");
        assertThat(annotation(node, "hami.io/node-handshake-Ascend310P")).isEqualTo("Reported_2026.03.01 10:00:01");
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isNull();
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isNull();
        assertThat(quantities(admin.nodes().withName(node).get().getStatus().getCapacity())).isEqualTo(Map.of(
                "huawei.com/Ascend310P", "7", "huawei.com/Ascend310P-memory", "21527", "huawei.com/Ascend310P-core", "8"));
        assertThat(registrar.registeredDeviceIds()).isEmpty();
        assertThat(registrar.snapshot().ready()).isTrue();

        registrar.close();

        assertThat(dispatcher.seen).filteredOn(r -> r.method().equals("PATCH"))
                .extracting(Seen::body).contains("{\"metadata\":{\"annotations\":{"
                        + "\"hami.io/node-register-Ascend310P\":null,\"hami-vnpu-core\":null,"
                        + "\"hami.io/node-handshake-Ascend310P\":null}}}",
                        "{\"status\":{\"capacity\":{\"huawei.com/Ascend310P\":null,\"huawei.com/Ascend310P-memory\":null,"
                        + "\"huawei.com/Ascend310P-core\":null},\"allocatable\":{\"huawei.com/Ascend310P\":null,"
                        + "\"huawei.com/Ascend310P-memory\":null,\"huawei.com/Ascend310P-core\":null}}}");
        assertThat(annotation(node, "hami.io/node-register-Ascend310P")).isNull();
    }

    @Test
    void aVendorOwnedElsewhereIsNoLongerWrittenWhileTheOthersAre() {
        String node = "mixed-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockDevices(node, "Ascend910B4:2,DCU-K100:1,A100-80GB:1")
                .deregisterOnExit(true).build());
        await().atMost(WAIT).untilAsserted(() -> assertThat(registrar.devicesRegistered()).isTrue());

        registrar.standAside(NodeVendor.HYGON, "/var/lib/kubelet/device-plugins/hygon.com_dcunum is served by"
                + " another device plugin");
        // Hygon's own plugin writes its keys from now on.
        admin.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"annotations\":{"
                + "\"" + DCU_REGISTER + "\":\"DCU-REAL,4,65520,100,DCU-K100,0,true,0,hami:\","
                + "\"" + DCU_HANDSHAKE + "\":\"Reported by the real plugin\"}}}");
        admin.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\":{\"capacity\":{\"hygon.com/dcumem\":\"65520\"},"
                        + "\"allocatable\":{\"hygon.com/dcumem\":\"65520\"}}}");
        clock.set(T0.plusSeconds(30));
        assertThat(registrar.registerOnce()).isTrue();

        assertThat(annotation(node, DCU_REGISTER)).isEqualTo("DCU-REAL,4,65520,100,DCU-K100,0,true,0,hami:");
        assertThat(annotation(node, DCU_HANDSHAKE)).isEqualTo("Reported by the real plugin");
        assertThat(quantities(admin.nodes().withName(node).get().getStatus().getCapacity()))
                .containsEntry("hygon.com/dcumem", "65520");
        assertThat(annotation(node, B4_HANDSHAKE)).isEqualTo("Reported_2026.03.01 10:00:31");
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:30");
        DeviceRegistrationSnapshot snapshot = registrar.snapshot();
        assertThat(snapshot.ownedElsewhere()).containsExactly(entry("Hygon",
                "/var/lib/kubelet/device-plugins/hygon.com_dcunum is served by another device plugin"));
        assertThat(snapshot.vendors()).extracting(v -> v.vendor().displayName()).containsExactly("Ascend910B4");
        assertThat(registrar.readinessCheck().run()).isEqualTo(new HealthCheck.Result(true, "Hygon registered by"
                + " another device plugin: /var/lib/kubelet/device-plugins/hygon.com_dcunum is served by another"
                + " device plugin"));

        // NVIDIA's too (HAMi's plugin on nvidia-gpu.sock): Ascend alone goes on.
        registrar.suspend("nvidia-gpu.sock is served by another device plugin");
        clock.set(T0.plusSeconds(40));
        assertThat(registrar.registerOnce()).isTrue();
        assertThat(annotation(node, B4_HANDSHAKE)).isEqualTo("Reported_2026.03.01 10:00:41");
        assertThat(annotation(node, Annotations.NODE_HANDSHAKE)).isEqualTo("Reported 2026-03-01 10:00:30");
        assertThat(registrar.suspendedReason()).isEqualTo("nvidia-gpu.sock is served by another device plugin");
        assertThat(registrar.snapshot().devices()).isEmpty();
        assertThat(registrar.snapshot().ownedElsewhere()).containsOnlyKeys("Hygon", "NVIDIA");
        assertThat(registrar.readinessCheck().run().reason()).isEqualTo("NVIDIA registered by another device"
                + " plugin: nvidia-gpu.sock is served by another device plugin; Hygon registered by another device"
                + " plugin: /var/lib/kubelet/device-plugins/hygon.com_dcunum is served by another device plugin");

        // On exit only Ascend's keys go: what the other plugins own stays.
        registrar.close();
        assertThat(annotation(node, B4_REGISTER)).isNull();
        assertThat(annotation(node, B4_HANDSHAKE)).isNull();
        assertThat(annotation(node, DCU_REGISTER)).isEqualTo("DCU-REAL,4,65520,100,DCU-K100,0,true,0,hami:");
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MIXED_NVIDIA);
        assertThat(quantities(admin.nodes().withName(node).get().getStatus().getCapacity()))
                .containsEntry("hygon.com/dcumem", "65520").containsEntry("nvidia.com/gpu", "10")
                .containsEntry("huawei.com/Ascend910B4", null); // deleted (the CRUD mock keeps it as null)
    }

    @Test
    void aNodeWhoseEveryVendorIsOwnedElsewhereWritesNothingAndReadinessSaysWhy() {
        String node = "dcu-worker";
        createNode(node);
        DeviceRegistrationConfig config = mockDevices(node, "DCU-Z100L").handshakeInterval(Duration.ofMillis(100))
                .retryInitialBackoff(Duration.ofMillis(50)).build();
        DeviceRegistrar registrar = new DeviceRegistrar(config, config.createSource().orElseThrow(), client, clock,
                registry);
        registrars.add(registrar);
        // As the agent starts: the device plugin probes the sockets before registration starts.
        registrar.standAside(NodeVendor.ascend("Ascend910B4"), "not on this node");
        registrar.standAside(NodeVendor.HYGON, "hygon.com_dcunum is served by another device plugin");
        registrar.start();

        await().during(Duration.ofMillis(500)).atMost(WAIT).untilAsserted(() ->
                assertThat(dispatcher.seen).noneMatch(r -> r.method().equals("PATCH")));
        assertThat(annotation(node, DCU_REGISTER)).isNull();
        assertThat(registrar.readinessCheck().run()).isEqualTo(new HealthCheck.Result(true,
                "Hygon registered by another device plugin: hygon.com_dcunum is served by another device plugin"));
        assertThat(registrar.snapshot().ownedElsewhere()).containsOnlyKeys("Ascend910B4", "Hygon");
        assertThat(registrar.snapshot().ready()).isFalse();
    }

    // ------------------------------------------------------------------ --report-node-capacity

    private static final NodeCapacityReport HAMI_NAMES = new NodeCapacityReport("nvidia.com/gpumem",
            "nvidia.com/gpucores");

    @Test
    void reportNodeCapacityPatchesTheHealthyTotalsAndFollowsAGpuTurningUnhealthy() {
        String node = "tenant-b-worker";
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().withNewStatus()
                .addToCapacity("cpu", new Quantity("16")).addToAllocatable("cpu", new Quantity("15")).endStatus()
                .build()).create();
        DeviceRegistrationConfig config = mockGpus(node, "L4-24GB:2")
                .advertiseCapacity(false)
                .reportNodeCapacity(HAMI_NAMES)
                .handshakeInterval(Duration.ofMillis(100))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build();
        HealthSwitch gpus = new HealthSwitch(config.createSource().orElseThrow());
        DeviceRegistrar registrar = start(config, gpus);

        // Two healthy L4s: 2 × 23034 MiB, 2 × 100 %, in capacity and allocatable; the node's other resources stay.
        await().atMost(WAIT).untilAsserted(() -> assertThat(status(node)).isEqualTo(Map.of(
                "capacity", Map.of("cpu", "16", "nvidia.com/gpumem", "46068", "nvidia.com/gpucores", "200"),
                "allocatable", Map.of("cpu", "15", "nvidia.com/gpumem", "46068", "nvidia.com/gpucores", "200"))));
        assertThat(statusPatches(node)).singleElement().satisfies(r -> {
            assertThat(r.contentType()).startsWith("application/merge-patch+json");
            assertThat(r.body()).isEqualTo("{\"status\":{\"capacity\":{\"nvidia.com/gpumem\":\"46068\","
                    + "\"nvidia.com/gpucores\":\"200\"},\"allocatable\":{\"nvidia.com/gpumem\":\"46068\","
                    + "\"nvidia.com/gpucores\":\"200\"}}}");
        });
        assertThat(registrar.devicesRegistered()).isTrue();

        // GPU 1 fails: the next rescan (every 30 s) finds it unhealthy and the round lowers the totals to GPU 0's.
        gpus.fail(1);
        clock.set(T0.plusSeconds(30));
        await().atMost(WAIT).untilAsserted(() -> assertThat(status(node)).isEqualTo(Map.of(
                "capacity", Map.of("cpu", "16", "nvidia.com/gpumem", "23034", "nvidia.com/gpucores", "100"),
                "allocatable", Map.of("cpu", "15", "nvidia.com/gpumem", "23034", "nvidia.com/gpucores", "100"))));
        assertThat(HamiDeviceCodec.decode(annotation(node, Annotations.NODE_NVIDIA_REGISTER)))
                .extracting(GpuDevice::healthy).containsExactly(true, false);

        // Level-triggered: a value someone else changed is restored at the next round.
        admin.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\":{\"allocatable\":{\"nvidia.com/gpucores\":\"7\"}}}");
        await().atMost(WAIT).untilAsserted(() -> assertThat(status(node).get("allocatable"))
                .containsEntry("nvidia.com/gpucores", "100"));

        // Unchanged totals are not written again, while the rounds go on.
        int patches = statusPatches(node).size();
        int handshakes = registrarPatches(node, "Reported ");
        await().atMost(WAIT).until(() -> registrarPatches(node, "Reported ") >= handshakes + 3);
        assertThat(statusPatches(node)).hasSize(patches);
        assertThat(patches).as("ours: the first totals, the lowered ones, the restore; and the test's own").isEqualTo(4);
    }

    @Test
    void offByDefaultNothingIsPatchedInTheStatus() {
        String node = "tenant-a-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .advertiseCapacity(false) // mock mode's own capacity (--advertise-gpu-capacity) is another flag
                .handshakeInterval(Duration.ofMillis(100))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).until(() -> registrarPatches(node, "Reported ") >= 3);
        assertThat(registrar.devicesRegistered()).isTrue();
        assertThat(statusPatches(node)).isEmpty();
        assertThat(status(node).getOrDefault("capacity", Map.of())).isEmpty();
    }

    @Test
    void aFailedCapacityReportKeepsTheRegistrationAndIsRetriedWithTheBackoff() {
        String node = "tenant-a-worker";
        createNode(node);
        server.expect().patch().withPath("/api/v1/nodes/" + node + "/status")
                .andReturn(403, new StatusBuilder().withStatus("Failure").withCode(403).withReason("Forbidden")
                        .withMessage("nodes \"" + node + "\" is forbidden: ValidatingAdmissionPolicy"
                                + " 'tenant-gateway-own-node' denied request").build())
                .times(2);

        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .advertiseCapacity(false)
                .reportNodeCapacity(HAMI_NAMES)
                .handshakeInterval(Duration.ofSeconds(30))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        // Retried after the backoff (50 ms, then 100 ms), not after the 30 s handshake interval.
        await().atMost(WAIT).untilAsserted(() -> assertThat(status(node).get("capacity"))
                .isEqualTo(Map.of("nvidia.com/gpumem", "81920", "nvidia.com/gpucores", "100")));
        assertThat(failures("api_rejected")).isEqualTo(2.0);
        assertThat(statusPatches(node)).hasSize(3);
        // The registration written in the first round stands: the scheduler sees the GPU, readiness is ok.
        assertThat(annotation(node, Annotations.NODE_NVIDIA_REGISTER)).isEqualTo(MockDeviceSourceTest.TENANT_A);
        assertThat(registrar.devicesRegistered()).isTrue();
        assertThat(registrar.snapshot().lastFailure()).isNull();
        assertThat(registrar.readinessCheck().run()).isEqualTo(HealthCheck.Result.OK);
    }

    @Test
    void withMockCapacityTheSameTotalsAreNotPatchedTwice() {
        String node = "tenant-a-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .reportNodeCapacity(HAMI_NAMES) // mock mode advertises nvidia.com/gpumem and gpucores too
                .handshakeInterval(Duration.ofMillis(100))
                .retryInitialBackoff(Duration.ofMillis(50))
                .build());

        await().atMost(WAIT).until(() -> registrarPatches(node, "Reported ") >= 3);
        assertThat(registrar.devicesRegistered()).isTrue();
        assertThat(status(node).get("capacity")).containsEntry("nvidia.com/gpumem", "81920")
                .containsEntry("nvidia.com/gpucores", "100").containsEntry("nvidia.com/gpu", "10");
        assertThat(statusPatches(node)).as("one patch: the report finds its totals in the answer to mock capacity's")
                .hasSize(1);
    }

    @Test
    void deregisterOnExitRemovesTheReportedTotals() {
        String node = "tenant-a-worker";
        createNode(node);
        DeviceRegistrar registrar = start(mockGpus(node, "A100-80GB")
                .advertiseCapacity(false)
                .reportNodeCapacity(HAMI_NAMES)
                .deregisterOnExit(true)
                .build());
        await().atMost(WAIT).untilAsserted(() -> assertThat(status(node).get("capacity"))
                .containsEntry("nvidia.com/gpumem", "81920"));

        registrar.close();

        assertThat(statusPatches(node)).last().extracting(Seen::body).isEqualTo("{\"status\":{\"capacity\":{"
                + "\"nvidia.com/gpumem\":null,\"nvidia.com/gpucores\":null},\"allocatable\":{"
                + "\"nvidia.com/gpumem\":null,\"nvidia.com/gpucores\":null}}}");
    }

    /** The mock source's GPUs, each healthy until the test fails it (as a GPU whose health check fails). */
    private static final class HealthSwitch implements DeviceSource {
        private final List<GpuDevice> devices;
        private final Set<Integer> failed = ConcurrentHashMap.newKeySet();

        HealthSwitch(DeviceSource mock) {
            try {
                this.devices = mock.discover();
            } catch (DeviceDiscoveryException e) {
                throw new AssertionError(e);
            }
        }

        void fail(int index) {
            failed.add(index);
        }

        @Override
        public String kind() {
            return "mock";
        }

        @Override
        public List<GpuDevice> discover() {
            return devices.stream().map(d -> !failed.contains(d.index()) ? d : new GpuDevice(d.id(), d.index(),
                    d.count(), d.devmemMiB(), d.devcore(), d.type(), d.numa(), d.mode(), false)).toList();
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The registrar's settings for {@code node} with mock GPUs ({@code gpus}: shorthand such as "L4-24GB:2"). */
    private static DeviceRegistrationConfig.Builder mockGpus(String node, String gpus) {
        return DeviceRegistrationConfig.builder(node).mock(MockInventory.parseShorthand(gpus));
    }

    /** The registrar's settings for {@code node} with {@code --mock-devices}'s shorthand. */
    private static DeviceRegistrationConfig.Builder mockDevices(String node, String devices) {
        return DeviceRegistrationConfig.builder(node).mock(MockInventory.parseDevices(devices));
    }

    /** {@code value} as a JSON string. */
    private static String json(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private DeviceRegistrar start(DeviceRegistrationConfig config) {
        return start(config, config.createSource().orElseThrow());
    }

    private DeviceRegistrar start(DeviceRegistrationConfig config, DeviceSource source) {
        DeviceRegistrar registrar = new DeviceRegistrar(config, source, client, clock, registry);
        registrars.add(registrar);
        registrar.start();
        return registrar;
    }

    private Node createNode(String name) {
        return admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    }

    /** The annotation's value; {@code null} when absent or null (the CRUD mock's deletion). */
    private String annotation(String node, String key) {
        Node n = admin.nodes().withName(node).get();
        return n == null ? null : Annotations.get(n.getMetadata().getAnnotations(), key);
    }

    private static Map<String, String> quantities(Map<String, Quantity> quantities) {
        Map<String, String> out = new HashMap<>();
        quantities.forEach((k, v) -> out.put(k, v == null ? null : v.toString()));
        return out;
    }

    /** The node's status capacity and allocatable as strings ({@code null} quantities left out). */
    private Map<String, Map<String, String>> status(String node) {
        NodeStatus status = admin.nodes().withName(node).get().getStatus();
        Map<String, Map<String, String>> out = new HashMap<>();
        if (status != null) {
            out.put("capacity", Quantities.present(status.getCapacity()));
            out.put("allocatable", Quantities.present(status.getAllocatable()));
        }
        return out;
    }

    /** The patches on the node's status subresource, in order. */
    private List<Seen> statusPatches(String node) {
        return dispatcher.seen.stream()
                .filter(r -> r.method().equals("PATCH") && r.path().equals("/api/v1/nodes/" + node + "/status"))
                .toList();
    }

    /** Merge patches on the node's metadata whose body contains {@code text}. */
    private int registrarPatches(String node, String text) {
        return (int) dispatcher.seen.stream()
                .filter(r -> r.method().equals("PATCH") && r.path().equals("/api/v1/nodes/" + node))
                .filter(r -> r.body().contains(text))
                .count();
    }

    private double failures(String reason) {
        String prefix = "tenant_gateway_device_registration_failures_total{reason=\"" + reason + "\"} ";
        return scrape().lines().filter(l -> l.startsWith(prefix))
                .mapToDouble(l -> Double.parseDouble(l.substring(prefix.length()))).findFirst().orElse(-1);
    }

    private String scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** nvidia-smi that fails like an unloaded driver until {@code driverLoaded} exists. */
    private Path fakeNvidiaSmi(Path dir, Path driverLoaded) throws IOException {
        Path output = dir.resolve("a100.csv");
        try (InputStream in = getClass().getResourceAsStream("nvidia-smi/a100-sxm4-80gb.csv")) {
            Files.write(output, in.readAllBytes());
        }
        Path smi = dir.resolve("nvidia-smi");
        Files.writeString(smi, "#!/bin/sh\n"
                + "if [ -f '" + driverLoaded + "' ]; then cat '" + output + "'; exit 0; fi\n"
                + "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                + "Make sure that the latest NVIDIA driver is installed and running.\"\n"
                + "exit 9\n");
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwx------"));
        return smi;
    }

    /**
     * Notes what each request carried (the CRUD dispatcher consumes bodies), then lets the mixed
     * dispatcher (expectations first, CRUD otherwise) answer.
     */
    static final class RecordingDispatcher extends Dispatcher {
        record Seen(String method, String path, String contentType, String body) {
        }

        final List<Seen> seen = new CopyOnWriteArrayList<>();
        private final KubernetesMixedDispatcher delegate;

        RecordingDispatcher(KubernetesMixedDispatcher delegate) {
            this.delegate = delegate;
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            seen.add(new Seen(request.getMethod(), request.getPath(), String.valueOf(request.getHeader("Content-Type")),
                    new String(request.getBody().getBytes(), StandardCharsets.UTF_8)));
            return delegate.dispatch(request);
        }

        @Override
        public void shutdown() {
            delegate.shutdown();
        }

        @Override
        public void releaseResources() {
            delegate.releaseResources();
        }
    }
}
