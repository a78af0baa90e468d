package io.tenantgateway.agent.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.devices.FailureReason;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.agent.locks.LockAction;
import io.tenantgateway.agent.locks.LockSnapshot;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.tunnel.client.ServerConnectionSnapshot;
import io.tenantgateway.tunnel.client.TunnelSnapshot;
import io.tenantgateway.webhook.AdmissionRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class StatusPageTest {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final String SCRIPT = "<script>alert('x')</script>";
    private static final String IMG = "\"><img src=x onerror=alert(1)>";

    private static final String NVIDIA = "hami.io/node-nvidia-register";
    private static final String HYGON = "hami.io/node-dcu-register";
    private static final String ASCEND = "hami.io/node-register-Ascend910B4";

    /** An NVIDIA JSON registration, a Hygon legacy-text one and an Ascend one HAMi cannot read. */
    private static NodeRegistrations registrations(String nvidiaId, String ascendValue) {
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(NVIDIA, "[{\"id\":\"" + nvidiaId.replace("\"", "\\\"") + "\",\"index\":0,\"count\":10,\"devmem\":23034,"
                + "\"devcore\":100,\"type\":\"NVIDIA L4\",\"health\":true}]");
        annotations.put("hami.io/node-handshake", "Reported 2026-11-30 11:59:50");
        annotations.put(HYGON, "DCU-b,4,65520,100,DCU-K100,0,false,1,hami-core:");
        annotations.put(ASCEND, ascendValue);
        return NodeRegistrations.decode("worker-1", annotations, Map.of(), NOW.minusSeconds(2),
                "lock controller's node informer");
    }

    private static StatusPage.Model hostileModel() {
        Map<String, HealthCheck.Result> readiness = new LinkedHashMap<>();
        readiness.put("server-connected", HealthCheck.Result.OK);
        readiness.put("devices-registered", HealthCheck.Result.failed("node " + SCRIPT + " missing"));
        AgentSnapshot tunnel = new AgentSnapshot(NOW, 2, false,
                List.of(new ServerConnectionSnapshot("kas-" + SCRIPT, "READY", NOW.minusSeconds(3725), true, 1),
                        new ServerConnectionSnapshot("", "CONNECTING", NOW.minusSeconds(1), false, 0)),
                List.of(new TunnelSnapshot(7, "kas-0", SCRIPT + ":443", 1536, 5L * 1024 * 1024, 0,
                        Duration.ofSeconds(75))));
        DeviceRegistrationSnapshot devices = new DeviceRegistrationSnapshot("worker-1", "mock", false,
                List.of(new GpuDevice("GPU-" + IMG, 0, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", true),
                        new GpuDevice("GPU-2", 1, 10, 23034, 100, "NVIDIA L4", 0, "hami-core", false)),
                "[]", NOW.minusSeconds(12), FailureReason.API_REJECTED, "patch refused: " + IMG, NOW);
        LockSnapshot locks = new LockSnapshot("worker-1", AllocationMode.DEVICE_PLUGIN, true,
                "2026-11-30T11:59:58Z,team-a,'&<pod>", "held by team-a/<pod>", 3,
                List.of(new LockAction(NOW.minusSeconds(30), "allocated", "team-a/old", "first"),
                        new LockAction(NOW.minusSeconds(1), "lock-released", "team-a/<pod>", "allocation " + SCRIPT)));
        List<AdmissionRecord> admissions = List.of(new AdmissionRecord(NOW, "uid-1", "team-a", "trainer-" + SCRIPT,
                "CREATE", AdmissionRecord.Route.BUILT_IN, "denied", 403, "pod has node assigned " + IMG, 0, 0,
                Duration.ofMillis(3)));
        return new StatusPage.Model(NOW, "0.1.0", "agent-" + SCRIPT, "worker-1", "kas.example:8132", readiness,
                Optional.of(tunnel), Optional.of(devices), Optional.of(locks),
                registrations("GPU-reg" + IMG, "[{\"id\":\"" + SCRIPT + "\",\"count\":\"4\"}]"),
                Optional.of(admissions), 42);
    }

    @Test
    void everyValueIsEscaped() {
        String html = StatusPage.render(hostileModel(), 5);

        assertThat(html).doesNotContain("<script", "<img", "<pod>", "onerror=alert(1)>");
        assertThat(html).contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;:443",
                "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;", "&#39;&amp;&lt;pod&gt;",
                "<b id=\"agent-id\">agent-&lt;script&gt;");
    }

    @Test
    void rendersEverySectionWithUnits() {
        String html = StatusPage.render(hostileModel(), 5);

        assertThat(html).startsWith("<!DOCTYPE html>").contains("<meta http-equiv=\"refresh\" content=\"5\">",
                "<span class=\"badge bad\">NOT READY</span>", "<section id=\"servers\">", "(connecting)",
                "1h2m", "1.5 KiB", "5.0 MiB", "1m15s", "23034 MiB", "UNHEALTHY",
                "<span class=\"badge bad\">no</span>", "12s ago", "2 connection(s), server count 2",
                "42 since start", "<span class=\"badge warn\">denied</span>", "team-a/trainer-");
        // Summary tiles: 1 of 2 connections ready, 1 tunnel, 2 GPUs not registered, 42 admissions.
        assertThat(html).contains("<div class=\"tile\" id=\"tile-servers\"><span class=\"value\">1 / 2</span>",
                "id=\"tile-gpus\"><span class=\"value\">2</span><span class=\"caption\">gpus · NOT registered",
                "id=\"tile-admissions\"><span class=\"value\">42</span>");
        // Lock actions newest first.
        assertThat(html.indexOf("lock-released")).isLessThan(html.indexOf(">allocated<"));
        assertThat(html).doesNotContain("http://", "https://", "<script");
    }

    @Test
    void partsThatAreOffSaySo() {
        StatusPage.Model model = new StatusPage.Model(NOW, "0.1.0", "agent-1", "", "127.0.0.1:8091",
                Map.of("server-connected", HealthCheck.Result.failed("no servers connected")),
                Optional.of(new AgentSnapshot(NOW, 1, true, List.of(), List.of())), Optional.empty(),
                Optional.empty(), NodeRegistrations.off("no Kubernetes API access (no enabled part uses the API)"),
                Optional.empty(), 0);

        String html = StatusPage.render(model, 0);

        assertThat(html).doesNotContain("http-equiv=\"refresh\"").contains("no server connected", "no open tunnels",
                "device registration off", "lock controller off", "webhook off", "<b>draining</b>",
                "<h2>HAMi registrations</h2><p class=\"off\">no Kubernetes API access (no enabled part uses the"
                        + " API)</p>", "id=\"tile-registrations\"><span class=\"value\">off</span>",
                "<span class=\"badge bad\">failed</span> server-connected: no servers connected",
                "<title>tenant-gateway · agent-1</title>");
    }

    @Test
    void everyVendorsRegistrationShowsItsDevicesOrTheReadersExactError() {
        String html = section(StatusPage.render(hostileModel(), 5), "registrations");

        assertThat(html).contains("node worker-1 as HAMi v2.10's scheduler reads it, from the lock controller&#39;s"
                + " node informer at 11:59:58 UTC");
        assertThat(html).contains("<div class=\"registration\" id=\"registration-hami.io/node-nvidia-register\"><h3>"
                + "NVIDIA <code>hami.io/node-nvidia-register</code> <span class=\"badge ok\">1 device(s)</span></h3>",
                "<td data-label=\"id\"><code>GPU-reg&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</code></td>"
                        + "<td class=\"num\" data-label=\"index\">0</td><td class=\"num\" data-label=\"count\">10</td>"
                        + "<td class=\"num\" data-label=\"devmem\">23034 MiB</td><td class=\"num\""
                        + " data-label=\"devcore\">100</td><td data-label=\"type\">NVIDIA L4</td>"
                        + "<td class=\"num\" data-label=\"numa\">0</td><td data-label=\"devicevendor\">NVIDIA</td>"
                        + "<td data-label=\"health\">healthy</td>");
        assertThat(html).contains("Hygon <code>hami.io/node-dcu-register</code> <span class=\"badge ok\">1 device(s)",
                "<code>DCU-b</code></td><td class=\"num\" data-label=\"index\">1</td><td class=\"num\""
                        + " data-label=\"count\">4</td><td class=\"num\" data-label=\"devmem\">65520 MiB</td>",
                "<td data-label=\"type\">DCU-K100</td><td class=\"num\" data-label=\"numa\">0</td>"
                        + "<td data-label=\"devicevendor\">DCU</td><td data-label=\"health\">UNHEALTHY</td>");
        assertThat(html).contains("Ascend <code>hami.io/node-register-Ascend910B4</code> <span class=\"badge bad\">"
                + "error</span></h3><p><code class=\"error\">json: cannot unmarshal string into Go struct field"
                + " DeviceInfo.count of type int32</code></p>");
        assertThat(html).doesNotContain("node-handshake");
        assertThat(StatusPage.render(hostileModel(), 5)).contains("id=\"tile-registrations\"><span class=\"value\">3"
                + "</span><span class=\"caption\">registrations · 1 do NOT decode</span>");
    }

    @Test
    void aRegistrationErrorAndAHostileKeyAreEscaped() {
        Map<String, String> annotations = Map.of("hami.io/node-register-\"><b>x", SCRIPT);
        String html = section(render(NodeRegistrations.decode("worker-1", annotations, Map.of(), NOW,
                "API get")), "registrations");

        assertThat(html).doesNotContain("<b>x", "<script").contains(
                "id=\"registration-hami.io/node-register-&quot;&gt;&lt;b&gt;x\"",
                "<code class=\"error\">invalid character &#39;&lt;&#39; looking for beginning of value</code>");
    }

    @Test
    void pendingFailedEmptyAndBoundedRegistrationsSaySo() {
        assertThat(section(render(NodeRegistrations.pending("", "node name not known yet (<discovering from pod"
                + " kube-system/agent-x>)")), "registrations"))
                .contains("<p class=\"off\">node name not known yet (&lt;discovering from pod kube-system/agent-x&gt;)");
        assertThat(render(NodeRegistrations.pending("worker-1", "reading node worker-1 through the API")))
                .contains("id=\"tile-registrations\"><span class=\"value\">-</span><span class=\"caption\">"
                        + "registrations · not read yet");
        String failed = render(NodeRegistrations.failed("worker-1", "cannot read node worker-1: tenant API"
                + " http://127.0.0.1:1 answered 403: forbidden", NOW, "API get"));
        assertThat(section(failed, "registrations")).contains("<span class=\"badge bad\">not read</span> cannot read"
                + " node worker-1: tenant API http://127.0.0.1:1 answered 403: forbidden");
        assertThat(failed).contains("id=\"tile-registrations\"><span class=\"value\">?</span>");
        assertThat(section(render(NodeRegistrations.decode("worker-1", Map.of("hami.io/node-handshake", "x"),
                Map.of("cpu", "8"), NOW, "API get")), "registrations"))
                .contains("no HAMi registration on this node");

        // 100 devices derived from capacity: the first 64 are listed.
        String bounded = section(render(NodeRegistrations.decode("worker-1", Map.of(),
                Map.of("aws.amazon.com/neuron", "100"), NOW, "API get")), "registrations");
        assertThat(bounded).contains("AWS Neuron <code>aws.amazon.com/neuron</code> (from capacity) <span"
                + " class=\"badge ok\">100 device(s)</span>", "the first 64 of 100 devices",
                "<code>worker-1-AWSNeuron-63</code>").doesNotContain("AWSNeuron-64<");
    }

    private static String render(NodeRegistrations registrations) {
        return StatusPage.render(new StatusPage.Model(NOW, "0.1.0", "agent-1", "worker-1", "127.0.0.1:8091",
                Map.of(), Optional.empty(), Optional.empty(), Optional.empty(), registrations, Optional.empty(), 0), 0);
    }

    private static String section(String html, String id) {
        int start = html.indexOf("<section id=\"" + id + "\">");
        assertThat(start).as("section %s", id).isNotNegative();
        return html.substring(start, html.indexOf("</section>", start));
    }

    @Test
    void escapeHandlesQuotesAmpersandsAndControlCharacters() {
        assertThat(Html.text("a&b<c>d\"e'f\u0007g\nh")).isEqualTo("a&amp;b&lt;c&gt;d&quot;e&#39;f&#xfffd;g\nh");
        assertThat(Html.text(null)).isEmpty();
    }
}
