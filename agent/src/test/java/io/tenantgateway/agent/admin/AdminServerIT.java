package io.tenantgateway.agent.admin;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.PartViews;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.Cleanup;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The admin server of a running agent (the {@code run} wiring: tunnel through our Java konnectivity-server, HAMi
 * webhook, two mock L4 GPUs, lock controller, fabric8's mock API server): the {@code /debug/*} JSON is complete, and
 * the {@code /ui} status page renders the agent's servers, tunnels, devices and admissions in a real headless
 * Chromium, with a phone-sized screenshot written to the build directory. The node also carries a Hygon legacy-text
 * registration and an Ascend one HAMi cannot read, next to the NVIDIA one the agent writes: the page and
 * {@code /debug/devices} show every vendor's devices, and the reader's exact error.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnableKubernetesMockClient(crud = true, https = false)
class AdminServerIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    static Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private final JsonMapper json = JsonMapper.builder().build();
    private static final String HYGON = "hami.io/node-dcu-register";
    private static final String ASCEND = "hami.io/node-register-Ascend910B4";
    private static final String ASCEND_ERROR = "json: cannot unmarshal string into Go struct field DeviceInfo.count"
            + " of type int32";
    private TunnelTestbed testbed;
    private Agent agent;
    private TunnelTestbed.Tunnel tunnel;
    private String echoAddress;

    @BeforeAll
    void start() throws Exception {
        testbed = new TunnelTestbed(dir);
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-worker-1")
                .addToAnnotations(HYGON, "DCU-b,4,65520,100,DCU-K100,0,true,0,hami-core:")
                .addToAnnotations(ASCEND, "[{\"id\":\"Ascend910B4-0\",\"count\":\"4\"}]").endMetadata().build())
                .create();
        Path kubeconfig = MockApiKubeconfig.write(dir, client);
        List<String> args = testbed.webhookArgs(0);
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.addAll(List.of("--agent-id=gpu-worker-1", "--node-name=gpu-worker-1", "--device-source=mock", "--monitor-listen=127.0.0.1:0",
                "--mock-gpus=L4-24GB:2", "--kubeconfig=" + kubeconfig, "--pod-field-selector=false"));
        agent = new Agent(AgentCommand.parse(args.toArray(String[]::new)).toConfig(), Clock.systemUTC());
        agent.start();
        await().atMost(Duration.ofSeconds(45)).until(() -> agent.readiness().values().stream()
                .allMatch(HealthCheck.Result::ok));

        // Something to show: an open tunnel with traffic, and one admission that came through the tunnel.
        tunnel = testbed.dialEcho();
        echoAddress = testbed.echo.hostPort();
        assertThat(tunnel.echo("bytes through the tunnel")).isEqualTo("bytes through the tunnel");
        testbed.probeWebhook(PartViews.webhook(agent).orElseThrow().port());
    }

    @AfterAll
    void stop() throws Exception {
        Cleanup.closeInOrder(tunnel, agent, testbed);
    }

    private String url(String path) {
        return "http://127.0.0.1:" + agent.admin().orElseThrow().boundPort() + path;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url(path))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode getJson(String path) throws Exception {
        HttpResponse<String> response = get(path);
        assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
        return json.readTree(response.body());
    }

    @Test
    void tunnelsListServerConnectionsAndOpenTunnels() throws Exception {
        JsonNode tunnels = getJson("/debug/tunnels");

        assertThat(tunnels.get("agentId").asString()).isEqualTo("gpu-worker-1");
        assertThat(tunnels.get("proxyServer").asString()).isEqualTo("127.0.0.1:"
                + testbed.server.agentAddress().getPort());
        assertThat(tunnels.get("serverCount").asInt()).isEqualTo(1);
        JsonNode serverConnection = tunnels.get("servers").get(0);
        assertThat(serverConnection.get("serverId").asString()).isEqualTo("kas-0");
        assertThat(serverConnection.get("state").asString()).isEqualTo("READY");
        assertThat(serverConnection.get("forSeconds").asDouble()).isGreaterThanOrEqualTo(0);
        assertThat(serverConnection.get("tunnels").asInt()).isEqualTo(1);
        JsonNode open = tunnels.get("tunnels").get(0);
        assertThat(tunnels.get("tunnels").size()).isEqualTo(1);
        assertThat(open.get("address").asString()).isEqualTo(echoAddress);
        assertThat(open.get("serverId").asString()).isEqualTo("kas-0");
        assertThat(open.get("connectID").asLong()).isPositive();
        assertThat(open.get("bytesToTarget").asLong()).isEqualTo("bytes through the tunnel".length());
        assertThat(open.get("bytesFromTarget").asLong()).isEqualTo("bytes through the tunnel".length());
        assertThat(open.get("ageSeconds").asDouble()).isGreaterThanOrEqualTo(0);
    }

    @Test
    void devicesLocksAndReadiness() throws Exception {
        JsonNode devices = getJson("/debug/devices");
        assertThat(devices.get("node").asString()).isEqualTo("gpu-worker-1");
        assertThat(devices.get("source").asString()).isEqualTo("mock");
        assertThat(devices.get("ready").asBoolean()).isTrue();
        assertThat(devices.get("devices")).hasSize(2).allSatisfy(device -> {
            assertThat(device.get("type").asString()).isEqualTo("NVIDIA L4");
            assertThat(device.get("memoryMiB").asInt()).isEqualTo(23034);
            assertThat(device.get("healthy").asBoolean()).isTrue();
        });
        assertThat(devices.get("registerAnnotation").asString()).startsWith("[{\"id\":\"GPU-");

        JsonNode locks = getJson("/debug/locks");
        assertThat(locks.get("node").asString()).isEqualTo("gpu-worker-1");
        assertThat(locks.get("synced").asBoolean()).isTrue();
        assertThat(locks.get("lock").isNull()).isTrue();
        assertThat(locks.has("recentActions")).isTrue();

        JsonNode readiness = getJson("/debug/readiness");
        assertThat(readiness.propertyNames()).contains("server-connected", "webhook-serving", "devices-registered",
                "lock-controller-synced");
        assertThat(readiness.get("server-connected").get("ok").asBoolean()).isTrue();
        assertThat(getJson("/debug/config").get("node-name").asString()).isEqualTo("gpu-worker-1");
    }

    @Test
    void everyVendorsRegistrationOfThisNodeOnTheStatusPageAndInDebugDevices() throws Exception {
        // The lock controller's informer has the NVIDIA registration the agent wrote.
        await().atMost(WAIT).untilAsserted(() -> assertThat(section(get("/ui?refresh=0").body(),
                "registrations")).contains("NVIDIA <code>hami.io/node-nvidia-register</code>"));
        String page = section(get("/ui?refresh=0").body(), "registrations");

        assertThat(page).contains("node gpu-worker-1 as HAMi v2.10's scheduler reads it, from the lock controller&#39;s"
                + " node informer at ");
        assertThat(page).contains("NVIDIA <code>hami.io/node-nvidia-register</code> <span class=\"badge ok\">2"
                + " device(s)</span>", "<td class=\"num\" data-label=\"devmem\">23034 MiB</td>",
                "<td data-label=\"type\">NVIDIA L4</td><td class=\"num\" data-label=\"numa\">0</td>"
                        + "<td data-label=\"devicevendor\">NVIDIA</td><td data-label=\"health\">healthy</td>");
        assertThat(page).contains("Hygon <code>hami.io/node-dcu-register</code> <span class=\"badge ok\">1"
                + " device(s)</span>", "<td data-label=\"id\"><code>DCU-b</code></td>",
                "<td class=\"num\" data-label=\"devmem\">65520 MiB</td>", "<td data-label=\"type\">DCU-K100</td>");
        assertThat(page).contains("Ascend <code>" + ASCEND + "</code> <span class=\"badge bad\">error</span></h3>"
                + "<p><code class=\"error\">" + ASCEND_ERROR + "</code></p>");

        JsonNode registrations = getJson("/debug/devices").get("registrations");
        assertThat(registrations.get("state").asString()).isEqualTo("read");
        assertThat(registrations.get("node").asString()).isEqualTo("gpu-worker-1");
        assertThat(registrations.get("source").asString()).isEqualTo("lock controller's node informer");
        assertThat(registrations.get("registrations")).extracting(r -> r.get("vendor").asString() + " "
                + r.get("key").asString() + " " + r.get("deviceCount").asInt())
                .containsExactlyInAnyOrder("NVIDIA hami.io/node-nvidia-register 2", "Hygon " + HYGON + " 1",
                        "Ascend " + ASCEND + " 0");
        for (JsonNode registration : registrations.get("registrations")) {
            switch (registration.get("vendor").asString()) {
                case "NVIDIA" -> assertThat(registration.get("devices")).hasSize(2).allSatisfy(d -> {
                    assertThat(d.get("type").asString()).isEqualTo("NVIDIA L4");
                    assertThat(d.get("devmem").asInt()).isEqualTo(23034);
                    assertThat(d.get("health").asBoolean()).isTrue();
                });
                case "Hygon" -> assertThat(registration.get("devices").get(0).get("id").asString()).isEqualTo("DCU-b");
                default -> {
                    assertThat(registration.get("error").asString()).isEqualTo(ASCEND_ERROR);
                    assertThat(registration.has("devices")).isFalse();
                }
            }
        }
    }

    @Test
    void admissionsShowDecisionsWithoutPodSpecs() throws Exception {
        JsonNode admissions = getJson("/debug/admissions");
        assertThat(admissions.get("total").asLong()).isEqualTo(1);
        JsonNode admission = admissions.get("admissions").get(0);
        assertThat(admission.get("name").asString()).isEqualTo("tenant-gateway-probe");
        assertThat(admission.get("namespace").asString()).isEqualTo("default");
        assertThat(admission.get("decision").asString()).isEqualTo("allowed");
        assertThat(admission.get("patchOperations").asInt()).isEqualTo(2);
        assertThat(admission.propertyNames()).doesNotContain("object", "spec", "pod", "patch");

        assertThat(getJson("/debug/admissions?limit=0").get("admissions")).isEmpty();
        HttpResponse<String> bad = get("/debug/admissions?limit=-1");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("limit: '-1' (expected: a number >= 0)");
    }

    @Test
    void pathsAndMethods() throws Exception {
        assertThat(getJson("/debug").get("paths").toString()).contains("/debug/tunnels", "/debug/admissions");
        HttpResponse<String> missing = get("/debug/nothing");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(missing.body()).contains("/ui", "/debug/tunnels");
        HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(url("/ui")))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        HttpResponse<String> root = get("/");
        assertThat(root.statusCode()).isEqualTo(302);
        assertThat(root.headers().firstValue("location")).hasValue("/ui");
    }

    @Test
    void statusPageIsSelfContainedHtml() throws Exception {
        HttpResponse<String> page = get("/ui");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("content-security-policy").orElseThrow())
                .startsWith("default-src 'none'; style-src 'unsafe-inline'");
        assertThat(page.body()).contains("<meta http-equiv=\"refresh\" content=\"5\">",
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .doesNotContain("<script", "src=\"http", "href=\"http");
        assertThat(get("/ui?refresh=0").body()).doesNotContain("http-equiv=\"refresh\"");
        assertThat(get("/ui?refresh=x").statusCode()).isEqualTo(400);
    }

    @Test
    void statusPageRendersInHeadlessChromium() throws Exception {
        String chromium = chromium();
        Path profile = Files.createDirectories(dir.resolve("chromium-profile"));
        List<String> common = List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile);

        List<String> dumpDom = new ArrayList<>(common);
        dumpDom.addAll(List.of("--dump-dom", url("/ui?refresh=0")));
        String dom = runBrowser(dumpDom);
        assertThat(dom).contains("<h1>tenant-gateway agent <span class=\"badge ok\">READY</span></h1>")
                .contains("<b id=\"agent-id\">gpu-worker-1</b>");
        assertThat(section(dom, "servers")).contains("<td data-label=\"server id\">kas-0</td>",
                "<td data-label=\"state\">READY</td>");
        assertThat(section(dom, "tunnels")).contains("<code>" + echoAddress + "</code>", "24 B");
        assertThat(section(dom, "devices")).contains("<td data-label=\"type\">NVIDIA L4</td>", "23034 MiB",
                "<span class=\"badge ok\">yes</span>");
        assertThat(section(dom, "admissions")).contains("default/tenant-gateway-probe", ">allowed</span>");
        assertThat(section(dom, "readiness")).contains("devices-registered", "lock-controller-synced");
        assertThat(section(dom, "locks")).contains("free");
        assertThat(section(dom, "registrations")).contains("<code>hami.io/node-nvidia-register</code>",
                "<code>DCU-b</code>", "<code class=\"error\">" + ASCEND_ERROR + "</code>");

        Path screenshot = buildDir().resolve("ui-screenshot.png");
        Files.deleteIfExists(screenshot);
        List<String> shoot = new ArrayList<>(common);
        shoot.addAll(List.of("--window-size=390,844", "--screenshot=" + screenshot, url("/ui?refresh=0")));
        runBrowser(shoot);
        assertThat(screenshot).as("screenshot written by chromium").exists();
        BufferedImage image = ImageIO.read(screenshot.toFile());
        assertThat(image).as("a PNG").isNotNull();
        assertThat(image.getWidth()).isEqualTo(390);
        assertThat(image.getHeight()).isEqualTo(844);
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = 0; x < image.getWidth(); x += 2) {
                colours.add(image.getRGB(x, y));
            }
        }
        assertThat(colours.size()).as("distinct colours: a rendered page, not a blank one").isGreaterThan(50);
        System.out.println("status page screenshot: " + screenshot.toAbsolutePath() + " (" + Files.size(screenshot)
                + " bytes)");
    }

    private static String section(String dom, String id) {
        int start = dom.indexOf("<section id=\"" + id + "\">");
        assertThat(start).as("section %s in the DOM", id).isNotNegative();
        return dom.substring(start, dom.indexOf("</section>", start));
    }

    /** Debian's chromium; {@code bin/test}, the README's test command, installs it when missing. */
    private static String chromium() {
        for (String name : List.of("chromium", "chromium-browser")) {
            if (JarProcess.onPath(name)) {
                return name;
            }
        }
        throw new AssertionError("chromium is not installed (this test renders /ui in a real headless browser):"
                + " bin/test installs it with 'apt-get install -y chromium'; do the same to run this test locally");
    }

    private static String runBrowser(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).start();
        CompletableFuture<String> out = read(process.getInputStream());
        CompletableFuture<String> err = read(process.getErrorStream());
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("chromium did not finish within 60 s: " + command);
        }
        assertThat(process.exitValue()).as("chromium exit code; stderr:%n%s", err.join()).isZero();
        return out.join();
    }

    private static CompletableFuture<String> read(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "<unreadable: " + e + ">";
            }
        });
    }

    /** The module's build directory (where failsafe puts the jar; {@code -Dtg.build.dir} moves it). */
    private static Path buildDir() throws IOException {
        String jar = System.getProperty("tenantgateway.jar");
        Path build = jar != null ? Path.of(jar).toAbsolutePath().getParent() : Path.of("target").toAbsolutePath();
        return Files.createDirectories(build);
    }
}
