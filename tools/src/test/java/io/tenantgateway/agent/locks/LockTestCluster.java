package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.tenantgateway.tools.hamisim.HamiSchedulerSimulator;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.agent.testing.MutableClock;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.common.retry.Backoff;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import io.tenantgateway.agent.health.LockMetrics;

/**
 * Shared setup for the controller's integration tests: a CRUD-mode mock API server with GPU nodes
 * and pods, the HAMi scheduler simulator, and readers for locks, Events, metrics and requests.
 */
final class LockTestCluster {
    static final String NODE = "node-a";
    static final String OTHER_NODE = "node-b";
    static final String NAMESPACE = "team-a";
    static final String GPU_A = "GPU-a1f2e3d4-0000-4000-8000-00000000000a";
    static final String GPU_B = "GPU-b1f2e3d4-0000-4000-8000-00000000000b";
    static final Instant START = Instant.parse("2025-06-01T10:00:00Z");
    static final Duration TIMEOUT = Duration.ofMinutes(5);

    final KubernetesMockServer server;
    final KubernetesClient client;
    final MutableClock clock = new MutableClock(START);
    final HamiSchedulerSimulator scheduler;
    private final List<AllocationController> controllers = new ArrayList<>();
    private final Map<PrometheusRegistry, LockMetrics> metrics = new HashMap<>();

    private LockTestCluster(KubernetesMockServer server, KubernetesClient client) {
        this.server = server;
        this.client = client;
        this.scheduler = new HamiSchedulerSimulator(client, clock, TIMEOUT,
                HamiSchedulerSimulator.BindMethod.PATCH_NODE_NAME, Backoff.hamiNodeLock(Duration.ofMillis(5)));
    }

    /**
     * A CRUD-mode mock API server on 127.0.0.1 (expectations registered on it answer first, then CRUD)
     * and one client whose fabric8-internal retry of 5xx responses is off, so the controller's retries
     * (re-read, then HAMi's backoff) are what the tests see — as the agent configures its client.
     */
    static LockTestCluster start() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        KubernetesMockServer server = new KubernetesMockServer(new Context(),
                new MockWebServer(), responses, new KubernetesMixedDispatcher(responses), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        KubernetesClient client = server.createClient(builder -> builder.editOrNewConfig()
                .withRequestRetryBackoffLimit(0).endConfig());
        return new LockTestCluster(server, client);
    }

    /** Test settings (device-plugin mode): CRUD mode needs the client-side pod filter only; fast reaper and retries. */
    static AllocationConfig config(AllocationMode mode) {
        return AllocationConfig.defaults(NODE)
                .withMode(mode)
                .withNodeLockTimeout(TIMEOUT)
                .withReapInterval(Duration.ofMillis(150))
                .withRetryBackoff(Backoff.hamiNodeLock(Duration.ofMillis(5)))
                .withPodFieldSelector(false);
    }

    AllocationController startController(PrometheusRegistry registry) {
        return startController(config(AllocationMode.DEVICE_PLUGIN), registry);
    }

    /** The metrics of {@code registry}, registered once (the agent shares one set between its parts too). */
    LockMetrics metrics(PrometheusRegistry registry) {
        return metrics.computeIfAbsent(registry, LockMetrics::new);
    }

    AllocationController startController(AllocationConfig config, PrometheusRegistry registry) {
        AllocationController controller = new AllocationController(client, config, metrics(registry), clock);
        controllers.add(controller);
        controller.start();
        assertThat(controller.synced()).isTrue();
        return controller;
    }

    void close() {
        controllers.forEach(AllocationController::close);
        metrics.values().forEach(LockMetrics::unregister);
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // fabric8's mock server gives up closing after 10 s when the machine is loaded (seen once in a full CI
            // run, after every assertion of the test had passed): teardown only, the next test gets a new server.
            System.err.println("LockTestCluster: " + e.getMessage() + " (ignored at teardown)");
        }
    }

    void createNode(String name) {
        client.nodes().resource(new NodeBuilder()
                .withNewMetadata().withName(name)
                    .addToAnnotations(Annotations.NODE_NVIDIA_REGISTER, "[{\"id\":\"" + GPU_A + "\",\"count\":10,"
                            + "\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"health\":true}]")
                .endMetadata()
                .build()).create();
    }

    /** An unbound GPU pod, as the webhook leaves it (schedulerName hami-scheduler, HAMi limits). */
    Pod createGpuPod(String name) {
        return client.pods().inNamespace(NAMESPACE).resource(new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(NAMESPACE).endMetadata()
                .withNewSpec()
                    .withSchedulerName("hami-scheduler")
                    .addNewContainer().withName("cuda").withImage("cuda:12")
                        .withNewResources()
                            .addToLimits("nvidia.com/gpu", new Quantity("1"))
                            .addToLimits("nvidia.com/gpumem", new Quantity("10000"))
                            .addToLimits("nvidia.com/gpucores", new Quantity("30"))
                        .endResources()
                    .endContainer()
                .endSpec()
                .withNewStatus().withPhase("Pending").endStatus()
                .build()).create();
    }

    /** Filter + Bind of one pod onto {@link #NODE} with one device; asserts the Bind succeeded. */
    void filterAndBind(String pod, String deviceUuid) {
        scheduler.filter(NAMESPACE, pod, NODE, List.of(List.of(ContainerDevice.nvidia(deviceUuid, 10000, 30))));
        var result = scheduler.bind(NAMESPACE, pod, NODE);
        assertThat(result.error()).isEmpty();
        assertThat(result.bound()).isTrue();
    }

    /**
     * What this agent's device plugin writes once kubelet's Allocate handed out every entry: entries consumed,
     * {@code bind-phase=success} (the lock release is the step after).
     */
    void markAllocated(String pod) {
        client.pods().inNamespace(NAMESPACE).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, Map.of(Annotations.POD_DEVICES_TO_ALLOCATE, ";",
                        Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS), Map.of()));
    }

    /** Writes a lock value directly, as a scheduler in the middle of its Bind (or a broken tool) would. */
    void setLock(String node, String value) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                MergePatch.metadata(null, Collections.singletonMap(Annotations.NODE_LOCK, value), Map.of()));
    }

    String lock(String node) {
        return Annotations.get(client.nodes().withName(node).get().getMetadata().getAnnotations(), Annotations.NODE_LOCK);
    }

    Pod pod(String name) {
        return client.pods().inNamespace(NAMESPACE).withName(name).get();
    }

    String annotation(String pod, String key) {
        return Annotations.get(pod(pod).getMetadata().getAnnotations(), key);
    }

    void setPodPhase(String pod, String phase) {
        client.pods().inNamespace(NAMESPACE).withName(pod).editStatus(p -> {
            p.getStatus().setPhase(phase);
            return p;
        });
    }

    /**
     * Waits until {@code count} NodeLockReleased Events exist: the controller records the Event last,
     * after the write and the metrics, so its bookkeeping is complete then.
     */
    void awaitReleaseEvents(int count) {
        await().atMost(WAIT).untilAsserted(() ->
                assertThat(events(AllocationController.REASON_LOCK_RELEASED)).hasSize(count));
    }

    List<Event> events(String reason) {
        return client.v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    static double counter(PrometheusRegistry registry, String name, String label, String value) {
        for (MetricSnapshot snapshot : registry.scrape()) {
            if (snapshot.getMetadata().getName().equals(name) && snapshot instanceof CounterSnapshot counter) {
                return counter.getDataPoints().stream()
                        .filter(p -> value.equals(p.getLabels().get(label)))
                        .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                        .sum();
            }
        }
        throw new AssertionError("no counter " + name);
    }

    static double releases(PrometheusRegistry registry, ReleaseReason reason) {
        return counter(registry, "tenant_gateway_node_lock_releases", "reason", reason.label());
    }

    static double allocations(PrometheusRegistry registry, String result) {
        return counter(registry, "tenant_gateway_allocations", "result", result);
    }

    static HistogramSnapshot.HistogramDataPointSnapshot holdTime(PrometheusRegistry registry) {
        for (MetricSnapshot snapshot : registry.scrape()) {
            if (snapshot.getMetadata().getName().equals("tenant_gateway_node_lock_hold_seconds")) {
                return ((HistogramSnapshot) snapshot).getDataPoints().get(0);
            }
        }
        throw new AssertionError("no histogram tenant_gateway_node_lock_hold_seconds");
    }

    /** Drains the requests the mock server recorded so far; "METHOD path" each. */
    List<String> takeRequests() throws InterruptedException {
        List<String> requests = new ArrayList<>();
        RecordedRequest request;
        while ((request = server.takeRequest(1, TimeUnit.MILLISECONDS)) != null) {
            requests.add(request.getMethod() + " " + request.getPath());
        }
        return requests;
    }
}
