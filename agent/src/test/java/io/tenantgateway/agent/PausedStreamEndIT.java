package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tunnel.protocol.Packets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that ends the stream while the agent has paused reading it (issue 31): the server stops reading the
 * agent's answers, so the agent stops requesting messages (what the server sent meanwhile waits in the agent's HTTP/2
 * window); then the server ends the stream with its trailers. grpc reports the end only after every message already
 * received was delivered, which a paused stream never asks for; the agent must notice the trailers themselves and
 * reconnect, against the real process as the image starts it.
 */
@Timeout(120)
class PausedStreamEndIT extends HostileServerTestBase {
    /**
     * How soon the agent must be back on a new stream once the paused one ended: issue 31 asks for "within seconds"
     * (it took the agent ~30 s before); the agent's reconnect waits one --sync-interval (1 s), so 5 s is that plus
     * room for a loaded machine.
     */
    private static final Duration RECONNECT_BOUND = Duration.ofSeconds(5);

    @AutoClose
    private TunnelTestbed.EchoTarget echo;

    @Test
    void aStreamTheServerEndsWhileTheAgentPausedReadingIsNoticedAndTheAgentReconnects() throws Exception {
        start();
        server.stopReading();
        // ~1.8 MB of CLOSE_REQs (15 bytes each on the wire). The agent answers each (a CLOSE_RSP with "Unknown
        // connectID", 34 bytes) until the server's 1 MiB receive window and then the 1 MiB + 256 KiB the agent queues
        // are full: 70,000-100,000 answers. What it has not read by then (300-750 KB) fits its 1 MiB starting HTTP/2
        // window, so the flood completes and the server's end of the stream is not stuck behind it.
        int count = 120_000;
        CompletableFuture<Void> flood = server.flood(HostileServer.packets(count,
                i -> Packets.closeRequest(1_000_000_000L + i)), 10_000, 1);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(flood::isDone);
        // The agent answers until its stream to the server is not ready, then stops requesting: the count of
        // CLOSE_REQs it handled stops growing, short of the flood.
        long[] seen = {-1};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            long now = handledCloseRequests();
            boolean stalled = now > 0 && now == seen[0];
            seen[0] = now;
            return stalled;
        });
        assertThat(seen[0]).as("CLOSE_REQs handled before the agent paused").isLessThan(count);
        assertThat(server.streams.get()).isEqualTo(1);

        server.endStream(Status.UNAVAILABLE.withDescription("server shutting down"));

        await().atMost(RECONNECT_BOUND).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(server.streams.get()).as("Connect streams").isEqualTo(2));
        assertThat(agent.lines("server ended the stream while the agent was not reading it")).hasSize(1);
        // The new stream serves: a dial and a round trip.
        server.resumeReading();
        echo = TunnelTestbed.newEchoTarget();
        long connectId = server.dial(echo.hostPort(), 1);
        HostileServer.Received received = server.keepData(connectId);
        server.send(Packets.data(connectId, ByteString.copyFromUtf8("ping")));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(received.bytes.get()).isEqualTo(4));
        assertThat(agent.process.isAlive()).isTrue();
        assertCleanLog();
    }

    private long handledCloseRequests() throws Exception {
        return (long) value(metrics(), "konnectivity_network_proxy_agent_stream_packets_total", "segment=\"to_agent\"",
                "packet_type=\"CLOSE_REQ\"");
    }
}
