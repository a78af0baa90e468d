package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Floods from a konnectivity-server (issue 24), against the agent as the image runs it: a server that stops reading
 * while it sends 400,000 CLOSE_REQs; 40,000 DIAL_REQs to a target that drops SYNs; 20,000 to a closed port. The
 * agent stays up within its memory bounds, answers every request, and a good tunnel on the same stream is served
 * throughout each dial flood: its round trips keep completing while the flood is still being sent (not only after
 * it), each within the tests' generous ceiling; the slowest is printed (issue 24 asks for 1 s, which
 * {@code -Dtenantgateway.it.goodTunnelLimitMs=1000} enforces on a quiet machine).
 */
@Timeout(120)
class HostileServerFloodIT extends HostileServerTestBase {
    /**
     * How soon a good tunnel on the attacked stream must answer: {@code WAIT}, because a loaded CI machine can miss
     * issue 24's "within 1 s throughout a flood" for reasons of its own; {@code -Dtenantgateway.it.goodTunnelLimitMs}
     * sets the figure to hold it to.
     */
    private static final Duration GOOD_TUNNEL_LIMIT =
            Duration.ofMillis(Long.getLong("tenantgateway.it.goodTunnelLimitMs", WAIT.toMillis()));

    @AutoClose
    private TunnelTestbed.EchoTarget echo;

    private long goodConnectId;
    private HostileServer.Received goodData;
    private long pings;
    private long maxRoundTripNanos;

    @Test
    void aServerThatStopsReadingWhileSending400000CloseRequestsCannotGrowTheAgent() throws Exception {
        start();
        openGoodTunnel();
        server.stopReading();
        int count = 400_000;
        CompletableFuture<Void> flood = server.flood(HostileServer.packets(count,
                i -> Packets.closeRequest(1_000_000_000L + i)), 10_000, 1);
        // The agent answers until its stream to the server is not ready, then stops reading (what it was sent waits
        // in its HTTP/2 window): the count of CLOSE_REQs it handled stops growing, well short of the flood.
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> handledCloseRequests() > 0);
        long[] seen = {-1};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            sampleMemory();
            long now = handledCloseRequests();
            boolean stalled = now == seen[0];
            seen[0] = now;
            return stalled;
        });
        assertThat(seen[0]).as("CLOSE_REQs handled while the server does not read").isLessThan(count);
        assertThat(server.closeResponses.get()).as("CLOSE_RSPs read (requested before it stopped)")
                .isLessThanOrEqualTo(HostileServer.READ_BATCH);
        System.out.printf("server not reading: the agent stopped after %d of %d CLOSE_REQs; %s%n", seen[0], count,
                memoryReport());
        // Reading again, everything drains: every CLOSE_REQ got its CLOSE_RSP, nothing was dropped.
        server.resumeReading();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            assertThat(server.closeResponses.get()).isEqualTo(count);
        });
        assertThat(flood).isDone();
        roundTrip();
        System.out.printf("400,000 CLOSE_REQs answered; %s%n", memoryReport());
        assertThat(peakRss).as("RSS").isLessThan(RSS_LIMIT);
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);
        assertCleanLog();
    }

    private long handledCloseRequests() throws Exception {
        return (long) value(metrics(), "konnectivity_network_proxy_agent_stream_packets_total", "segment=\"to_agent\"",
                "packet_type=\"CLOSE_REQ\"");
    }

    @Test
    void fortyThousandDialsToATargetThatDropsSynsAndTwentyThousandToAClosedPort() throws Exception {
        start("--dial-timeout=2s");
        openGoodTunnel();
        try (SynDroppingListener blackHole = SynDroppingListener.open()) {
            dialFlood("SYN-dropping target", blackHole.address(), 40_000, 1_000_000L);
        }
        String closed = "127.0.0.1:" + TunnelTestbed.freePort();
        dialFlood("closed port", closed, 20_000, 2_000_000L);
        // A new dial works once the floods are answered.
        long fresh = server.dial(echo.hostPort(), 7);
        assertThat(fresh).isPositive();
        System.out.printf("dial floods: %d good round trips, slowest %.0f ms; %s%n", pings,
                maxRoundTripNanos / 1e6, memoryReport());
        assertThat(peakRss).as("RSS").isLessThan(RSS_LIMIT);
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);
        String metrics = metrics();
        assertThat(value(metrics, "konnectivity_network_proxy_agent_open_endpoint_connections")).as("open tunnels")
                .isEqualTo(2.0); // the good tunnel and the fresh one: no flood dial left a socket open
        assertCleanLog();
    }

    /**
     * {@code count} DIAL_REQs for {@code address} at ~10,000/s (20,000 in 2 s, the middle of the red team's 1-3 s;
     * a Go server's Send blocks while the stream is not ready, so does this one), with good round trips on the same
     * stream throughout: at least one completes while the flood is still being sent.
     */
    private void dialFlood(String what, String address, int count, long firstId) throws Exception {
        long errorsBefore = server.dialErrors.get();
        long responsesBefore = server.dialResponseCount.get();
        CompletableFuture<Void> flood = server.flood(HostileServer.packets(count,
                i -> Packets.dialRequest(address, firstId + i)), 500, 50);
        int duringFlood = 0;
        while (!flood.isDone()) {
            roundTrip();
            sampleMemory();
            if (!flood.isDone()) {
                duringFlood++;
            }
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            roundTrip();
            sampleMemory();
            assertThat(server.dialResponseCount.get() - responsesBefore).as("every DIAL_REQ answered").isEqualTo(count);
        });
        long errors = server.dialErrors.get() - errorsBefore;
        String sample = server.dialResponse(firstId + count - 1).get().getDialResponse().getError();
        System.out.printf("%s: %d DIAL_REQs, %d DIAL_RSP errors (last: %s); %s%n", what, count, errors, sample,
                memoryReport());
        assertThat(errors).isEqualTo(count);
        assertThat(sample).startsWith("dial tcp " + address + ": ");
        assertThat(duringFlood).as("good round trips completed while the %s flood was being sent", what).isPositive();
    }

    private void openGoodTunnel() throws Exception {
        echo = TunnelTestbed.newEchoTarget();
        goodConnectId = server.dial(echo.hostPort(), 1);
        goodData = server.keepData(goodConnectId);
        roundTrip();
    }

    /** One echo through the good tunnel, on the attacked stream; must come back within {@link #GOOD_TUNNEL_LIMIT}. */
    private void roundTrip() throws IOException {
        byte[] ping = ("ping-" + (++pings) + ";").getBytes(StandardCharsets.US_ASCII);
        long start = System.nanoTime();
        server.send(Packets.data(goodConnectId, ByteString.copyFrom(ping)));
        StringBuilder echoed = new StringBuilder();
        await().atMost(GOOD_TUNNEL_LIMIT).pollInterval(Duration.ofMillis(5)).until(() -> {
            ByteString chunk;
            while ((chunk = goodData.chunks.poll()) != null) {
                echoed.append(chunk.toString(StandardCharsets.US_ASCII));
            }
            return echoed.toString().contains(new String(ping, StandardCharsets.US_ASCII));
        });
        long took = System.nanoTime() - start;
        if (took > 100_000_000L) {
            System.out.printf("slow round trip %d ms at ping %d (dial responses %d)%n", took / 1_000_000, pings,
                    server.dialResponseCount.get());
        }
        maxRoundTripNanos = Math.max(maxRoundTripNanos, took);
    }

    /**
     * A target that drops SYNs, on loopback: a listener with backlog 1 that never accepts, its accept queue filled
     * first. Linux then drops further SYNs to it (the listen-overflow path), so connects hang until they time out,
     * as to a firewalled address.
     */
    static final class SynDroppingListener implements AutoCloseable {
        private final ServerSocket listener;
        private final List<Socket> fillers = new ArrayList<>();

        private SynDroppingListener(ServerSocket listener) {
            this.listener = listener;
        }

        static SynDroppingListener open() throws IOException {
            SynDroppingListener full =
                    new SynDroppingListener(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            for (int i = 0; i < 16; i++) {
                Socket socket = new Socket();
                full.fillers.add(socket);
                try {
                    socket.connect(full.listener.getLocalSocketAddress(), 200);
                } catch (SocketTimeoutException e) {
                    return full; // the queue is full: SYNs are dropped now
                }
            }
            full.close();
            throw new IllegalStateException("accept queue never filled (expected: connects to hang at backlog 1)");
        }

        String address() {
            return "127.0.0.1:" + listener.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            for (Socket socket : fillers) {
                socket.close();
            }
            listener.close();
        }
    }
}
