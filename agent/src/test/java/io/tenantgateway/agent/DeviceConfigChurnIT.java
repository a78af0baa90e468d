package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.tenantgateway.agent.k8s.EventCorrelator;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.agent.testing.WebhookHttps;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 31, HAMi's device ConfigMap against the agent as the image starts it ({@code bin/tenant-gateway run} with the
 * webhook and {@code --device-config-map}, fabric8's CRUD mock API): 2,000 updates in 20 s, half of them invalid,
 * make a handful of Events (the correlator's bound: at most 25 Event writes about one object in a burst, one Event
 * per distinct error) and leave the last valid version in force; a number past its range, an object stored under
 * the key and a value over 1 MiB are each one Warning Event, a metric and a readiness detail naming the reason, and
 * the watch applies the next valid version.
 */
@Timeout(240)
@EnableKubernetesMockClient(crud = true, https = false)
class DeviceConfigChurnIT extends AgentProcessTestBase {
    static KubernetesMockServer server;
    static KubernetesClient client;

    private static final String NAMESPACE = "kube-system";
    private static final String SHARE_ONLY = "{'metadata':{'name':'share'},'spec':{'containers':[{'name':'c',"
            + "'resources':{'limits':{'nvidia.com/gpumem':'3000'}}}]}}";
    private static final String TOO_BIG = "nvidia:\n  deviceMemoryScaling: 9223372036854775808\n";

    private int webhookPort;
    private int health;
    private WebhookHttps webhook;
    private final ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();

    @BeforeEach
    void noRecordedRequests() throws InterruptedException {
        while (server.takeRequest(10, TimeUnit.MILLISECONDS) != null) {
            // drained: a test counts only its own requests
        }
    }

    @AfterEach
    void stopWriter() {
        writer.shutdownNow();
    }

    private static ConfigMap configMap(String name, String yaml) {
        return new ConfigMapBuilder().withNewMetadata().withNamespace(NAMESPACE).withName(name).endMetadata()
                .addToData("device-config.yaml", yaml).build();
    }

    private static String valid(String resourceCountName) {
        return "nvidia:\n  resourceCountName: " + resourceCountName + "\n";
    }

    /** Starts the agent watching {@code kube-system/name}, which holds {@code example.com/first}, and waits for it. */
    private void start(String name) throws Exception {
        client.configMaps().resource(configMap(name, valid("example.com/first"))).create();
        testbed = new TunnelTestbed(dir);
        webhookPort = TunnelTestbed.freePort();
        health = TunnelTestbed.freePort();
        List<String> args = testbed.webhookArgs(webhookPort, health);
        args.add("--kubeconfig=" + MockApiKubeconfig.write(dir, client));
        args.add("--device-config-map=" + NAMESPACE + "/" + name);
        agent = AgentProcess.launch(args);
        agent.awaitLine("webhook listening", Duration.ofSeconds(60));
        webhook = new WebhookHttps(testbed.pki);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(readiness())
                .contains("[+]webhook-device-config ok\n"));
        assertCountName("example.com/first");
    }

    private String readiness() throws Exception {
        assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
        return LoopbackHttp.get(health, "/readyz?verbose").body();
    }

    private String metrics() throws Exception {
        return LoopbackHttp.get(health, "/metrics").body();
    }

    /** The next admission counts the GPU under {@code name}: that device config is the one in force. */
    private void assertCountName(String name) throws Exception {
        assertThat(webhook.admitPod(webhookPort, "team-a", SHARE_ONLY).patch())
                .contains("/limits/" + name.replace("/", "~1") + "\",\"value\":\"1\"");
    }

    /** Replaces the ConfigMap's data with {@code device-config.yaml: value}, written untyped (any JSON value). */
    private static void put(String name, Object value) {
        GenericKubernetesResource configMap = new GenericKubernetesResourceBuilder().withApiVersion("v1")
                .withKind("ConfigMap").withNewMetadata().withNamespace(NAMESPACE).withName(name).endMetadata()
                .addToAdditionalProperties("data", Map.of("device-config.yaml", value)).build();
        client.genericKubernetesResources("v1", "ConfigMap").inNamespace(NAMESPACE).resource(configMap).update();
    }

    /**
     * Waits until the newest version of {@code name} is rejected for {@code reason} with {@code error}: its Warning
     * Event, the readiness detail (the last valid version in use) and the metric.
     */
    private void awaitRejected(String name, String reason, String error) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(rejections(name)).extracting(Event::getMessage)
                    .contains(error + "; the webhook keeps the last valid version");
            assertThat(readiness()).contains("[+]webhook-device-config ok (newest version rejected (" + reason + "): "
                    + error + "; using ConfigMap kube-system/" + name + " resourceVersion ");
            assertThat(metrics()).contains("tenant_gateway_device_config_rejected_total{reason=\"" + reason
                    + "\"} 1.0", "tenant_gateway_device_config_invalid 1.0");
        });
    }

    private List<Event> rejections(String name) {
        return client.v1().events().inNamespace(NAMESPACE).list().getItems().stream()
                .filter(e -> "DeviceConfigRejected".equals(e.getReason())
                        && name.equals(e.getInvolvedObject().getName())).toList();
    }

    /** POSTs and PATCHes of Events since the test started. */
    private static int eventWrites() throws InterruptedException {
        int writes = 0;
        RecordedRequest request;
        while ((request = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
            if (request.getPath().contains("/events") && !request.getMethod().equals("GET")) {
                writes++;
            }
        }
        return writes;
    }

    private void assertNoStackTrace() {
        assertThat(agent.log).as("no stack trace in the log").noneMatch(line -> line.startsWith("\tat ")
                || line.contains("Exception:") && !line.contains("expected:"));
    }

    @Test
    void twoThousandUpdatesHalfInvalidMakeAHandfulOfEventsAndTheLastValidOneIsInForce() throws Exception {
        String name = "churn";
        start(name);
        // 2,000 versions at 100 a second: every other one invalid (not YAML, or 2^63), the last one valid.
        int updates = 2000;
        AtomicInteger written = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        ScheduledFuture<?> task = writer.scheduleAtFixedRate(() -> {
            int i = written.get();
            if (i == updates) {
                done.countDown();
                return;
            }
            String yaml = i % 2 == 1 ? valid("example.com/gpu-" + i) : i % 4 == 0 ? "nvidia: {\n" : TOO_BIG;
            try {
                client.configMaps().resource(configMap(name, yaml)).update();
                written.incrementAndGet();
            } catch (RuntimeException e) {
                failed.set(e);
                done.countDown();
                throw e;
            }
        }, 0, 10, TimeUnit.MILLISECONDS);
        assertThat(done.await(120, TimeUnit.SECONDS)).as("2,000 updates written").isTrue();
        task.cancel(false);
        assertThat(failed.get()).isNull();

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertCountName("example.com/gpu-1999"));
        assertThat(readiness()).contains("[+]webhook-device-config ok\n");

        String metrics = metrics();
        int writes = eventWrites();
        List<Event> events = rejections(name);
        int occurrences = events.stream().mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum();
        System.out.printf("churn: %d updates; agent: %s; %d Event writes, %d Events (counts %s)%n", updates,
                metrics.lines().filter(l -> l.startsWith("tenant_gateway_device_config_re")
                        || l.startsWith("tenant_gateway_events_total")).toList(), writes, events.size(),
                events.stream().map(Event::getCount).toList());
        // The bound (agent/REFERENCE.md "Events"): one Event per distinct error, at most 25 writes about one object.
        assertThat(events).as("one Event per distinct error").hasSizeBetween(1, 2)
                .allSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));
        assertThat(writes).as("Event creates and count bumps").isBetween(1, EventCorrelator.SPAM_BURST);
        assertThat(occurrences).as("each write counts what it stands for").isGreaterThanOrEqualTo(events.size());
        assertThat(metrics).contains("tenant_gateway_device_config_invalid 0.0")
                .doesNotContain("tenant_gateway_device_config_rejected_total{reason=\"not_yaml\"} 0.0",
                        "tenant_gateway_device_config_rejected_total{reason=\"invalid_value\"} 0.0");
        assertNoStackTrace();
    }

    @Test
    void aNumberPastItsRangeAnObjectValueAndAHugeValueAreRejectedAndTheWatchGoesOn() throws Exception {
        String name = "odd-values";
        start(name);

        client.configMaps().resource(configMap(name, TOO_BIG)).update();
        awaitRejected(name, "invalid_value", "ConfigMap kube-system/odd-values data.device-config.yaml:"
                + " nvidia.deviceMemoryScaling: 9223372036854775808 (expected: > 0 and <= 100)");
        assertCountName("example.com/first");

        // What no typed client can write: an object under the key (a raw PUT of the untyped ConfigMap). From here on
        // the test writes untyped too: fabric8's typed update reads the stored object first, and fails on it.
        put(name, Map.of("nvidia", Map.of("resourceCountName", "example.com/object")));
        awaitRejected(name, "not_text", "ConfigMap kube-system/odd-values data.device-config.yaml: an object"
                + " (expected: HAMi's device-config.yaml as text)");

        // A value over 1 MiB (the API server's own limit is about that; the mock has none).
        put(name, "# " + "x".repeat(2 * 1024 * 1024));
        awaitRejected(name, "too_large", "ConfigMap kube-system/odd-values data.device-config.yaml: 2097154 bytes"
                + " (expected: at most 1048576 bytes, 1 MiB: the most a Kubernetes ConfigMap holds)");
        assertCountName("example.com/first");

        // The watch is alive: the next valid version is applied, and readiness is clean again.
        put(name, valid("example.com/after"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertCountName("example.com/after"));
        assertThat(readiness()).contains("[+]webhook-device-config ok\n");
        assertThat(rejections(name)).as("one Warning Event per rejected version").hasSize(3)
                .allSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));
        assertNoStackTrace();
    }
}
