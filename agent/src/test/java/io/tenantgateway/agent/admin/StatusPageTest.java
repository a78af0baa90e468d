package io.tenantgateway.agent.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.devices.DeviceRegistrationSnapshot;
import io.tenantgateway.agent.devices.FailureReason;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.agent.locks.LockAction;
import io.tenantgateway.agent.locks.LockSnapshot;
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

@Timeout(10)
class StatusPageTest {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final String SCRIPT = "<script>alert('x')</script>";
    private static final String IMG = "\"><img src=x onerror=alert(1)>";

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
                Optional.of(tunnel), Optional.of(devices), Optional.of(locks), Optional.of(admissions), 42);
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
                Optional.empty(), Optional.empty(), 0);

        String html = StatusPage.render(model, 0);

        assertThat(html).doesNotContain("http-equiv=\"refresh\"").contains("no server connected", "no open tunnels",
                "device registration off", "lock controller off", "webhook off", "<b>draining</b>",
                "<span class=\"badge bad\">failed</span> server-connected: no servers connected",
                "<title>tenant-gateway · agent-1</title>");
    }

    @Test
    void escapeHandlesQuotesAmpersandsAndControlCharacters() {
        assertThat(Html.text("a&b<c>d\"e'f\u0007g\nh")).isEqualTo("a&amp;b&lt;c&gt;d&quot;e&#39;f&#xfffd;g\nh");
        assertThat(Html.text(null)).isEmpty();
    }
}
