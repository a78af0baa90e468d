package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.region.SimulatedRegion;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.Cleanup;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.jfr.FlightRecorder;
import jdk.jfr.RecordingState;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What operators scrape and profile, on a real agent (every HAMi part on, {@code --count-server-leases},
 * {@code --enable-profiling --enable-contention-profiling}) against the Java konnectivity-server and fabric8's CRUD
 * mock API, after some traffic (a tunnel, a refused dial, an admission through the tunnel, a failed device
 * registration): the health port's {@code /metrics} has upstream's families plus process and JVM metrics, every
 * metric the Grafana dashboard queries is exported, the admin port's {@code /metrics} redirects, and a JFR recording
 * downloads and reads with the JDK's {@code jfr} tool. A second agent without the flags answers 404 on the profiling
 * paths.
 */
@Timeout(180)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnableKubernetesMockClient(crud = true, https = false)
class ObservabilityIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    /** Process and JVM families the JVM instrumentation exports (the brief's list; the client's own names). */
    static final List<String> PROCESS_AND_JVM = List.of("process_cpu_seconds_total", "process_resident_memory_bytes",
            "process_open_fds", "process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes",
            "jvm_memory_used_bytes", "jvm_memory_committed_bytes", "jvm_memory_max_bytes", "jvm_threads_current",
            "jvm_threads_daemon", "jvm_gc_collection_seconds");

    @TempDir
    static Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private TunnelTestbed testbed;
    private Agent agent;
    private TunnelTestbed.Tunnel tunnel;

    @BeforeAll
    void start() throws Exception {
        testbed = new TunnelTestbed(dir);
        client.leases().inNamespace("kube-system").resource(new LeaseBuilder().withNewMetadata().withName("kas-0")
                .addToLabels("k8s-app", "konnectivity-server").endMetadata().withNewSpec().withHolderIdentity("kas-0")
                .withLeaseDurationSeconds(3600).withRenewTime(ZonedDateTime.now())
                .endSpec().build()).create();
        List<String> args = testbed.webhookArgs(0);
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.addAll(List.of("--agent-id=gpu-worker-1", "--node-name=gpu-worker-1", "--device-source=mock", "--monitor-listen=127.0.0.1:0",
                "--mock-gpus=L4-24GB:2", "--handshake-interval=2s",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client), "--pod-field-selector=false",
                "--device-plugin-host-root=" + dir.resolve("host"), "--monitor-scan-interval=200ms",
                "--count-server-leases", "--enable-profiling", "--enable-contention-profiling"));
        agent = new Agent(AgentCommand.parse(args.toArray(String[]::new)).toConfig(), Clock.systemUTC());
        agent.start();
        // The node does not exist yet: a registration attempt fails (the failure counter gets a series).
        await().atMost(Duration.ofSeconds(45)).untilAsserted(() -> assertThat(scrape())
                .contains("tenant_gateway_device_registration_failures_total{"));
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-worker-1").endMetadata().build())
                .create();
        await().atMost(Duration.ofSeconds(45)).until(() -> agent.readiness().values().stream()
                .allMatch(HealthCheck.Result::ok));

        // A GPU container whose HAMi-core region exists: the vGPU monitor's families get their series.
        Pod gpuPod = client.pods().inNamespace("team-a").resource(new PodBuilder().withNewMetadata()
                .withName("trainer").withNamespace("team-a").addToAnnotations(Annotations.POD_DEVICES_ALLOCATED,
                        "GPU-0,NVIDIA,1024,10:;").endMetadata().withNewSpec().withNodeName("gpu-worker-1")
                .addNewContainer().withName("cuda").withImage("cuda").endContainer().endSpec().build()).create();
        SimulatedRegion.write(dir.resolve("host/usr/local/vgpu/containers/" + gpuPod.getMetadata().getUid()
                + "_cuda/a.cache"), 7, List.of(new SimulatedRegion.Device("GPU-0", 1L << 30, 10, 1L << 20, 5)),
                System.currentTimeMillis() / 1000);
        await().atMost(WAIT).untilAsserted(() -> assertThat(scrape()).contains("hami_vgpu_memory_used_bytes{"));

        tunnel = testbed.dialEcho();
        assertThat(tunnel.echo("bytes through the tunnel")).isEqualTo("bytes through the tunnel");
        int closed = TunnelTestbed.freePort();
        CompletableFuture<?> refused = testbed.dial("127.0.0.1:" + closed, new ChannelInboundHandlerAdapter());
        await().atMost(WAIT).until(refused::isDone);
        assertThat(refused).isCompletedExceptionally();
        testbed.probeWebhook(PartViews.webhook(agent).orElseThrow().port());
    }

    @AfterAll
    void stop() throws Exception {
        Cleanup.closeInOrder(tunnel, agent, testbed);
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String scrape() throws Exception {
        HttpResponse<String> response = get(agent.health().orElseThrow().boundPort(), "/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", Pattern.MULTILINE);
    private static final Pattern SUFFIX = Pattern.compile("_(bucket|sum|count|created)$");

    /** Sample names on a scrape, each also without a histogram/summary suffix (so families match either way). */
    static Set<String> families(String text) {
        Set<String> names = new TreeSet<>();
        Matcher sample = SAMPLE.matcher(text);
        while (sample.find()) {
            names.add(sample.group(1));
            names.add(SUFFIX.matcher(sample.group(1)).replaceAll(""));
        }
        return names;
    }

    @Test
    void healthMetricsHaveUpstreamsFamiliesAndProcessAndJvmMetrics() throws Exception {
        String text = scrape();
        Files.writeString(Path.of("target", "observability-metrics.txt"), text); // for reading, next to the reports
        Set<String> families = families(text);

        assertThat(families).containsAll(PROCESS_AND_JVM);
        assertThat(families).contains(
                "konnectivity_network_proxy_agent_server_connection_failure_count",
                "konnectivity_network_proxy_agent_dial_duration_seconds_bucket",
                "konnectivity_network_proxy_agent_endpoint_dial_failure_total",
                "konnectivity_network_proxy_agent_open_server_connections",
                "konnectivity_network_proxy_agent_known_server_count",
                "konnectivity_network_proxy_agent_open_endpoint_connections",
                "konnectivity_network_proxy_agent_stream_packets_total",
                "konnectivity_network_proxy_agent_lease_lists_total",
                "konnectivity_network_proxy_agent_lease_watches_total",
                "konnectivity_network_proxy_agent_lease_list_latency_seconds_bucket");
        assertThat(text).contains(
                "konnectivity_network_proxy_agent_server_connection_failure_count{direction=\"from_server\"} 0",
                "konnectivity_network_proxy_agent_server_connection_failure_count{direction=\"to_server\"} 0",
                "konnectivity_network_proxy_agent_lease_lists_total{http_status_code=\"200\"} 1",
                "konnectivity_network_proxy_agent_endpoint_dial_failure_total{reason=\"unknown\"} 1");
        assertThat(text).contains("konnectivity_network_proxy_agent_lease_watches_total{http_status_code=\"200\"}");
        // Packet series only for the types seen (upstream's behaviour), and none for our credit extension.
        assertThat(text).contains("stream_packets_total{packet_type=\"DIAL_REQ\",segment=\"to_agent\"}")
                .doesNotContain("packet_type=\"TG_CREDIT\"", "packet_type=\"DRAIN\"");
    }

    @Test
    void everyMetricTheDashboardQueriesIsExported() throws Exception {
        Path file = Path.of(System.getProperty("user.dir")).resolve("../manifests/dashboards/tenant-gateway.json")
                .normalize();
        JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(file));
        List<String> expressions = new ArrayList<>();
        collectExpressions(dashboard, expressions);
        assertThat(expressions).as("PromQL expressions in the dashboard").hasSizeGreaterThan(15);

        Set<String> exported = families(scrape());
        Set<String> queried = new TreeSet<>();
        for (String expression : expressions) {
            queried.addAll(metricNames(expression));
        }
        assertThat(queried).as("metrics the dashboard queries").hasSizeGreaterThan(15)
                .allSatisfy(name -> assertThat(exported).as("exported families").contains(name));
    }

    private static void collectExpressions(JsonNode node, List<String> out) {
        if (node.isObject()) {
            JsonNode expr = node.get("expr");
            if (expr != null && expr.isString()) {
                out.add(expr.asString());
            }
            JsonNode query = node.get("query");
            if (node.has("type") && "query".equals(node.get("type").asString()) && query != null) {
                out.add(query.isString() ? query.asString() : query.get("query").asString());
            }
        }
        for (JsonNode child : node) {
            collectExpressions(child, out);
        }
    }

    private static final Set<String> PROMQL_WORDS = Set.of("sum", "rate", "irate", "increase", "avg", "max", "min",
            "count", "histogram_quantile", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "offset", "bool", "topk", "bottomk", "time", "clamp_min", "label_values", "vector", "abs",
            "delta", "deriv", "avg_over_time", "max_over_time");

    /** Metric names in a PromQL expression: identifiers outside {...}, [...], by(...) and strings, not functions. */
    static Set<String> metricNames(String expression) {
        String stripped = expression.replaceAll("label_values\\(([^,]+),\\s*\\w+\\)", "$1").replaceAll("\"[^\"]*\"", "\"\"").replaceAll("\\{[^}]*}", "")
                .replaceAll("\\[[^]]*]", "").replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", "")
                .replaceAll("\\$\\w+", "");
        Set<String> names = new TreeSet<>();
        Matcher identifier = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*").matcher(stripped);
        while (identifier.find()) {
            String name = identifier.group();
            int after = identifier.end();
            boolean call = after < stripped.length() && stripped.substring(after).stripLeading().startsWith("(");
            if (!PROMQL_WORDS.contains(name) && !call && !name.matches("e\\d*") && !name.matches("\\d.*")) {
                names.add(SUFFIX.matcher(name).replaceAll(""));
            }
        }
        return names;
    }

    @Test
    void adminMetricsRedirectToTheHealthPort() throws Exception {
        int adminPort = agent.admin().orElseThrow().boundPort();
        HttpResponse<String> response = get(adminPort, "/metrics");

        assertThat(response.statusCode()).isEqualTo(301);
        assertThat(response.headers().firstValue("location"))
                .hasValue("http://127.0.0.1:" + agent.health().orElseThrow().boundPort() + "/metrics");
        HttpResponse<String> followed = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build()
                .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(followed.statusCode()).isEqualTo(200);
        assertThat(followed.body()).contains("konnectivity_network_proxy_agent_open_server_connections");
    }

    @Test
    void threadDumpAndHeapHistogram() throws Exception {
        int adminPort = agent.admin().orElseThrow().boundPort();
        HttpResponse<String> threads = get(adminPort, "/debug/threads");
        assertThat(threads.statusCode()).isEqualTo(200);
        assertThat(threads.body()).contains("Full thread dump", "vert.x-eventloop-thread", "java.lang.Thread.State");

        HttpResponse<String> histogram = get(adminPort, "/debug/heap-histogram");
        assertThat(histogram.statusCode()).isEqualTo(200);
        assertThat(histogram.body()).contains("#instances", "#bytes", "java.lang.String");
    }

    @Test
    void jfrRecordingDownloadsAndTheJdksJfrToolReadsIt() throws Exception {
        int adminPort = agent.admin().orElseThrow().boundPort();
        assertThat(get(adminPort, "/debug/jfr?seconds=0").statusCode()).isEqualTo(400);
        assertThat(get(adminPort, "/debug/jfr?seconds=301").statusCode()).isEqualTo(400);

        CompletableFuture<HttpResponse<byte[]>> download = http.sendAsync(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + adminPort + "/debug/jfr?seconds=1")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        // One recording at a time: while this one runs, another request is refused.
        await().atMost(WAIT).until(() -> FlightRecorder.getFlightRecorder().getRecordings().stream()
                .anyMatch(r -> r.getName().equals("tenant-gateway-admin") && r.getState() == RecordingState.RUNNING));
        if (!download.isDone()) {
            HttpResponse<String> busy = get(adminPort, "/debug/jfr?seconds=1");
            if (!download.isDone()) {
                assertThat(busy.statusCode()).isEqualTo(409);
            }
        }
        HttpResponse<byte[]> response = download.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-disposition")).hasValueSatisfying(v -> assertThat(v)
                .contains(".jfr"));
        Path file = Files.write(dir.resolve("agent.jfr"), response.body());

        Process jfr = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jfr").toString(),
                "summary", file.toString()).redirectErrorStream(true).start();
        String summary = new String(jfr.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(jfr.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(jfr.exitValue()).as(summary).isZero();
        Files.writeString(Path.of("target", "observability-jfr-summary.txt"), summary);
        // Asked for 1 s: at least that, and nowhere near the 300 s limit (a loaded machine stops it a second late).
        Matcher duration = Pattern.compile("Duration: (\\d+) s").matcher(summary);
        assertThat(duration.find()).as(summary).isTrue();
        assertThat(Long.parseLong(duration.group(1))).as(summary).isBetween(1L, WAIT.toSeconds());
        assertThat(summary).contains("jdk.ExecutionSample", "jdk.ThreadPark", "jdk.JavaMonitorEnter");
        // --enable-contention-profiling: the lock events' threshold is 1 ms, not the profile's 10/20 ms.
        assertThat(thresholds(file)).containsEntry("jdk.JavaMonitorEnter", "1000000 ns")
                .containsEntry("jdk.ThreadPark", "1000000 ns").containsEntry("jdk.JavaMonitorWait", "1000000 ns");
        // The recording is gone from the agent once downloaded.
        await().atMost(WAIT).until(() -> FlightRecorder.getFlightRecorder().getRecordings()
                .stream().noneMatch(r -> r.getName().equals("tenant-gateway-admin")));
    }

    /** Event type name to its threshold setting, from the recording's jdk.ActiveSetting events (last one wins). */
    private static Map<String, String> thresholds(Path file) throws Exception {
        Map<String, String> out = new HashMap<>();
        try (RecordingFile recording = new RecordingFile(file)) {
            Map<Long, String> types = new HashMap<>();
            recording.readEventTypes().forEach(type -> types.put(type.getId(), type.getName()));
            while (recording.hasMoreEvents()) {
                RecordedEvent event = recording.readEvent();
                if (event.getEventType().getName().equals("jdk.ActiveSetting")
                        && "threshold".equals(event.getString("name"))) {
                    out.put(types.get(event.getLong("id")), event.getString("value"));
                }
            }
        }
        return out;
    }

    @Test
    void withoutTheFlagTheProfilingPathsAre404() throws Exception {
        try (TunnelTestbed plain = new TunnelTestbed(Files.createDirectories(dir.resolve("plain")));
                Agent tunnelOnly = new Agent(AgentCommand.parse(plain.kamajiArgs().toArray(String[]::new))
                        .toConfig(), Clock.systemUTC())) {
            tunnelOnly.start();
            int adminPort = tunnelOnly.admin().orElseThrow().boundPort();
            for (String path : List.of("/debug/threads", "/debug/heap-histogram", "/debug/jfr",
                    "/debug/jfr?seconds=1", "/debug/pprof/")) {
                assertThat(get(adminPort, path).statusCode()).as(path).isEqualTo(404);
            }
            assertThat(get(adminPort, "/metrics").statusCode()).isEqualTo(301);
        }
    }
}
