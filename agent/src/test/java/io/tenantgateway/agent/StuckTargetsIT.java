package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.tenantgateway.agent.testing.DataFeeder;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.agent.testing.ThrottledTarget;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.IOException;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kubectl exec -i} into processes that never read stdin, through a server without per-tunnel flow control (as
 * upstream), against the agent as the image runs it (issue 31): the shared stream pauses because of those tunnels,
 * and {@code --stuck-target-timeout} after the pause began the agent closes each of them (CLOSE_RSP with the reason,
 * counted, one WARN with its connectionID); the stream resumes and a new dial on it succeeds. A tunnel whose target
 * reads a few KiB a second is never closed, even while the stream is paused because of it alone for twice the timeout.
 */
@Timeout(120)
class StuckTargetsIT extends HostileServerTestBase {
    private static final Duration TIMEOUT = Duration.ofSeconds(3); // short to keep the test fast; default 30s
    private static final int STUCK_TUNNELS = 12;
    private static final int DATA = 64 * 1024;
    private static final long STUCK_BYTES = 8 * MIB;
    private static final long SLOW_RATE = 8 * 1024;
    private static final Pattern KLOG_TIME = Pattern.compile("^[IWEF]\\d{4} (\\d{2}:\\d{2}:\\d{2}\\.\\d{6}) ");

    private final List<ThrottledTarget> targets = new ArrayList<>();

    @AutoClose
    private TunnelTestbed.EchoTarget echo;

    @AfterEach
    void closeTargets() throws IOException {
        for (ThrottledTarget target : targets) {
            target.close();
        }
    }

    @Test
    void twelveTunnelsIntoTargetsThatNeverReadAreClosedAfterTheTimeoutAndASlowReaderIsKept() throws Exception {
        start("--stuck-target-timeout=" + TIMEOUT.toSeconds() + "s");
        List<DataFeeder> stuck = new ArrayList<>();
        for (int i = 0; i < STUCK_TUNNELS; i++) {
            stuck.add(new DataFeeder(server.dial(target(0).address(), 100 + i), DATA, STUCK_BYTES, i));
        }
        ThrottledTarget slowTarget = target(SLOW_RATE);
        DataFeeder slow = new DataFeeder(server.dial(slowTarget.address(), 200), DATA, 4 * MIB, 99);
        List<DataFeeder> all = new ArrayList<>(stuck);
        all.add(slow);
        CompletableFuture<Void> flood = server.flood(roundRobin(all), 16, 1);

        // The stream pauses at the target-buffer budget; the stuck tunnels are closed, each with the reason.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            assertThat(server.closeErrors).hasSize(STUCK_TUNNELS);
        });
        String reason = "target accepted nothing for 3s while the server stream was paused for it"
                + " (--stuck-target-timeout)";
        for (DataFeeder feeder : stuck) {
            assertThat(server.closeErrors).containsEntry(feeder.connectId(), reason);
        }
        assertThat(server.closeErrors).doesNotContainKey(slow.connectId());
        assertThat(value(metrics(), "tenant_gateway_tunnel_stuck_targets_closed_total")).isEqualTo(STUCK_TUNNELS);
        // One WARN per closed tunnel, naming it, none before the timeout had passed since the pause began.
        LocalTime paused = klogTime(single("target buffers reached the agent's direct-memory budget"));
        List<String> closing = agent.lines("closing tunnel: its target accepted nothing for 3s");
        assertThat(closing).hasSize(STUCK_TUNNELS);
        for (DataFeeder feeder : stuck) {
            assertThat(closing).filteredOn(line -> line.contains("connectionID=" + feeder.connectId() + " "))
                    .hasSize(1);
        }
        for (String line : closing) {
            assertThat(klogTime(line)).as(line).isAfterOrEqualTo(paused.plus(TIMEOUT));
        }

        // The stream resumed: a new dial on the same stream succeeds right after, and the tunnel works.
        echo = TunnelTestbed.newEchoTarget();
        long fresh = server.dial(echo.hostPort(), 300);
        HostileServer.Received echoed = server.keepData(fresh);
        server.send(Packets.data(fresh, ByteString.copyFromUtf8("ping")));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(echoed.bytes.get()).isEqualTo(4));
        assertThat(server.streams.get()).as("Connect streams").isEqualTo(1);
        await().atMost(Duration.ofSeconds(30)).until(flood::isDone);

        // The slow tunnel alone fills its buffer past the high-water mark: the stream pauses because of it, and it
        // is kept while it reads, for twice the timeout (measured by what it read at its rate).
        slow.add(12 * MIB);
        CompletableFuture<Void> more = server.flood(roundRobin(List.of(slow)), 16, 1);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            assertThat(agent.lines("tunnel buffer full; pausing")).hasSize(1);
        });
        long readAtPause = slowTarget.received.get();
        long readInTwiceTheTimeout = 2 * TIMEOUT.toSeconds() * SLOW_RATE;
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            sampleMemory();
            return slowTarget.received.get() - readAtPause >= readInTwiceTheTimeout;
        });
        assertThat(more).as("the stream is still paused for the slow tunnel").isNotDone();
        assertThat(server.closeErrors).doesNotContainKey(slow.connectId());
        assertThat(value(metrics(), "tenant_gateway_tunnel_stuck_targets_closed_total")).isEqualTo(STUCK_TUNNELS);

        // Reading at full speed, it gets every byte, in order.
        slowTarget.readFreely();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            assertThat(slowTarget.received.get()).isEqualTo(16 * MIB);
        });
        assertThat(slowTarget.sha256()).isEqualTo(slow.sha256());
        assertThat(more).isDone();
        assertThat(value(metrics(), "konnectivity_network_proxy_agent_open_endpoint_connections"))
                .as("the slow tunnel and the fresh one").isEqualTo(2);
        System.out.printf("%d stuck tunnels closed, --stuck-target-timeout=%ds; %s%n", STUCK_TUNNELS,
                TIMEOUT.toSeconds(), memoryReport());
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);
        assertCleanLog();
    }

    private ThrottledTarget target(long bytesPerSecond) throws IOException {
        ThrottledTarget target = new ThrottledTarget(bytesPerSecond);
        targets.add(target);
        return target;
    }

    /** DATA of each feeder in turn, leaving out those with nothing left and those the agent closed. */
    private Iterator<byte[]> roundRobin(List<DataFeeder> feeders) {
        int[] turn = {0};
        return HostileServer.until(() -> {
            for (int tried = 0; tried < feeders.size(); tried++) {
                DataFeeder feeder = feeders.get(turn[0]++ % feeders.size());
                if (feeder.left() > 0 && !server.closeErrors.containsKey(feeder.connectId())) {
                    return feeder.next();
                }
            }
            return null;
        });
    }

    private String single(String text) {
        List<String> lines = agent.lines(text);
        assertThat(lines).as("lines with %s", text).hasSize(1);
        return lines.get(0);
    }

    private static LocalTime klogTime(String line) {
        Matcher matcher = KLOG_TIME.matcher(line);
        assertThat(matcher.find()).as("klog time in %s", line).isTrue();
        return LocalTime.parse(matcher.group(1));
    }
}
