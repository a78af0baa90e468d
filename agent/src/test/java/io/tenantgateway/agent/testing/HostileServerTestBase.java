package io.tenantgateway.agent.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the hostile-server ITs share: a {@link HostileServer}, and the agent started as the image starts it
 * ({@code bin/tenant-gateway run}: -Xmx48m, 32 MiB direct) against it, plus readings of its memory.
 */
public abstract class HostileServerTestBase {
    protected static final long MIB = 1024 * 1024;
    /** The launcher's direct-memory bound ({@code -XX:MaxDirectMemorySize=32m}). */
    protected static final long DIRECT_LIMIT = 32 * MIB;
    /** The memory request the manifests give the agent (agent/REFERENCE.md, "Memory budget"): RSS stays below it. */
    protected static final long RSS_LIMIT = 192 * MIB;

    @TempDir
    protected Path dir;

    @AutoClose
    protected AgentProcess agent;

    @AutoClose
    protected HostileServer server;

    private int healthPort;
    protected long peakRss;
    protected long peakDirect;
    protected long peakBudgetUsed;

    /** Starts the hostile server and the agent against it, and waits for the stream. */
    protected void start(String... extraArgs) throws Exception {
        TestPki pki = TestPki.create("hostile-it");
        TestPki.Files files = pki.writeTo(dir.resolve("pki"));
        Path token = Files.writeString(dir.resolve("token"), "token\n");
        server = new HostileServer(pki);
        List<String> args = new ArrayList<>(List.of("--logtostderr=true", "--ca-cert=" + files.caCert(),
                "--proxy-server-host=127.0.0.1", "--proxy-server-port=" + server.port(),
                "--health-server-host=127.0.0.1", "--health-server-port=0", "--admin-bind-address=127.0.0.1",
                "--admin-server-port=0", "--service-account-token-path=" + token,
                // Loopback targets: the default dial policy may deny loopback, so it is named here.
                "--dial-allow=127.0.0.0/8"));
        args.addAll(List.of(extraArgs));
        agent = AgentProcess.launch(args);
        healthPort = agent.healthPort();
        server.connected.get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** The agent's resident set ({@code VmRSS} of /proc/PID/status), in bytes; records the peak. */
    protected long rss() throws IOException {
        long bytes = agent.rssKiB() * 1024;
        peakRss = Math.max(peakRss, bytes);
        return bytes;
    }

    /** The agent's /metrics (health port). */
    protected String metrics() throws IOException, InterruptedException {
        return LoopbackHttp.get(healthPort, "/metrics").body();
    }

    /** The value of the series {@code name} with every one of {@code labels} ({@code key="value"}), or 0. */
    protected static double value(String metrics, String name, String... labels) {
        Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(metrics);
        while (matcher.find()) {
            String set = matcher.group(1) == null ? "" : matcher.group(1);
            if (java.util.Arrays.stream(labels).allMatch(set::contains)) {
                return Double.parseDouble(matcher.group(2));
            }
        }
        return 0;
    }

    /** Reads RSS, direct buffers and the target-buffer budget once, records their peaks, checks the process. */
    protected void sampleMemory() throws IOException, InterruptedException {
        assertThat(agent.process.isAlive()).as("agent alive; log:%n%s", String.join("\n", agent.log)).isTrue();
        rss();
        String metrics = metrics();
        peakDirect = Math.max(peakDirect, (long) value(metrics, "jvm_buffer_pool_used_bytes", "pool=\"direct\""));
        peakBudgetUsed = Math.max(peakBudgetUsed,
                (long) value(metrics, "tenant_gateway_memory_budget_used_bytes", "account=\"tunnel-target-buffers\""));
    }

    protected String memoryReport() {
        return String.format("peak RSS %.1f MiB, peak direct buffers %.1f MiB, peak target-buffer budget used %.1f MiB",
                peakRss / (double) MIB, peakDirect / (double) MIB, peakBudgetUsed / (double) MIB);
    }

    /** The agent never ran out of memory and never logged a stack trace. */
    protected void assertCleanLog() {
        assertThat(agent.lines("OutOfMemoryError")).as("no OutOfMemoryError").isEmpty();
        assertThat(agent.log.stream().filter(line -> line.matches("\\s+at .*|\\s*Caused by: .*")).toList())
                .as("no stack traces").isEmpty();
    }

    /** Dials {@code target} through the hostile server as tunnel {@code random} and asks for its bytes from {@code seed}. */
    protected HostileServer.Received startDownload(DownloadTarget target, long random, long seed) throws Exception {
        long connectId = server.dial(target.hostPort(), random);
        HostileServer.Received received = server.track(connectId);
        server.send(Packets.data(connectId, ByteString.copyFrom(ByteBuffer.allocate(8).putLong(0, seed))));
        return received;
    }

    /** Waits for all {@code size} bytes (sampling memory meanwhile) and checks they are the target's, by SHA-256. */
    protected void awaitDownload(HostileServer.Received received, long size, long seed) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            assertThat(received.bytes.get()).isEqualTo(size);
        });
        assertThat(received.sha256()).isEqualTo(DownloadTarget.sha256(seed, size));
    }
}
