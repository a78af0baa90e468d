package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kubectl exec -i} into processes that never read stdin (issue 24), against a server without the flow-control
 * extension (as upstream): 12 tunnels fed 64 KiB DATA and one fed 4 MiB DATA, into targets that do not read. The agent
 * pauses the shared stream within its direct-memory budget, closes none of them and does not run out of memory;
 * when the targets read, every byte arrives in order.
 */
@Timeout(120)
class StalledTargetsIT extends HostileServerTestBase {
    private static final int SMALL_TUNNELS = 12;
    private static final int SMALL_DATA = 64 * 1024;
    private static final long SMALL_BYTES = 8 * MIB;
    private static final int BIG_DATA = 4 * 1024 * 1024;
    private static final long BIG_BYTES = 32 * MIB;

    private final List<NonReadingTarget> targets = new ArrayList<>();

    @AfterEach
    void closeTargets() throws IOException {
        for (NonReadingTarget target : targets) {
            target.close();
        }
    }

    /** 12 × 64 KiB DATA: each tunnel stays under its high-water mark; together they fill the budget. */
    @Test
    void twelveTunnelsIntoTargetsThatNeverReadPauseTheStreamAtTheBudgetAndResumeIntact() throws Exception {
        stallAndResume(SMALL_TUNNELS, false, "target buffers reached the agent's direct-memory budget");
    }

    /** 4 MiB DATA (what an upstream server may send) into a target that never reads, next to the 12 small ones. */
    @Test
    void fourMebibyteDataIntoATargetThatNeverReadsPausesTheStreamAndResumesIntact() throws Exception {
        stallAndResume(SMALL_TUNNELS, true, "pausing the server stream");
    }

    private void stallAndResume(int smallTunnels, boolean withBig, String pauseLog) throws Exception {
        start();
        int tunnels = smallTunnels + (withBig ? 1 : 0);
        long[] connectIds = new long[tunnels];
        Feeder[] feeders = new Feeder[tunnels];
        for (int i = 0; i < tunnels; i++) {
            boolean big = i == smallTunnels;
            NonReadingTarget target = new NonReadingTarget(big ? BIG_BYTES : SMALL_BYTES);
            targets.add(target);
            connectIds[i] = server.dial(target.address(), 100 + i);
            feeders[i] = new Feeder(connectIds[i], big ? BIG_DATA : SMALL_DATA, big ? BIG_BYTES : SMALL_BYTES, i);
        }
        int[] turn = {0};
        CompletableFuture<Void> flood = server.flood(HostileServer.until(() -> {
            for (int tried = 0; tried < tunnels; tried++) {
                Feeder feeder = feeders[turn[0]++ % tunnels];
                if (feeder.left() > 0) {
                    return feeder.next();
                }
            }
            return null;
        }), 16, 1);

        // The shared stream pauses (budget or a tunnel's high-water mark) and stays paused: nothing moves.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            sampleMemory();
            return value(metrics(), "tenant_gateway_tunnel_shared_stream_pauses_total") >= 1;
        });
        double[] seen = {-1};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            sampleMemory();
            double now = value(metrics(), "tenant_gateway_tunnel_bytes_total", "direction=\"to_target\"");
            boolean still = now == seen[0];
            seen[0] = now;
            return still;
        });
        String paused = metrics();
        double budgetLimit = value(paused, "tenant_gateway_memory_budget_limit_bytes", "account=\"tunnel-target-buffers\"");
        System.out.printf("paused: %.1f of %.1f MiB accepted for targets, flood done=%s, budget limit %.1f MiB; %s%n",
                seen[0] / MIB, (smallTunnels * SMALL_BYTES + (withBig ? BIG_BYTES : 0)) / (double) MIB, flood.isDone(),
                budgetLimit / MIB, memoryReport());
        System.out.printf("pauses: budget WARN %d, tunnel-buffer WARN %d%n",
                agent.lines("reached the agent's direct-memory budget").size(),
                agent.lines("tunnel buffer full; pausing").size());
        assertThat(agent.lines(pauseLog)).as("pause logged: %s", pauseLog).hasSize(1);
        assertThat(flood).as("the server is held back").isNotDone();
        assertThat(server.closeResponses.get()).as("no tunnel closed").isZero();
        assertThat(peakBudgetUsed).as("target-buffer budget used")
                .isLessThanOrEqualTo((long) budgetLimit + 2L * (BIG_DATA + 64 * 1024));
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);

        // The targets read: everything arrives, in order, and no tunnel was closed.
        targets.forEach(NonReadingTarget::startReading);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            sampleMemory();
            for (NonReadingTarget target : targets) {
                assertThat(target.received.get()).isEqualTo(target.expected);
            }
        });
        assertThat(flood).isDone();
        for (int i = 0; i < tunnels; i++) {
            assertThat(targets.get(i).sha256()).as("tunnel %d", i).isEqualTo(feeders[i].sha256());
        }
        assertThat(server.closeResponses.get()).as("no tunnel closed").isZero();
        assertThat(value(metrics(), "konnectivity_network_proxy_agent_open_endpoint_connections"))
                .isEqualTo(tunnels);
        System.out.printf("resumed: all %d tunnels intact; %s%n", tunnels, memoryReport());
        assertThat(peakRss).as("RSS").isLessThan(RSS_LIMIT);
        assertCleanLog();
    }

    /** Makes one tunnel's DATA: pseudo-random bytes, hashed as they are made. */
    private static final class Feeder {
        private final long connectId;
        private final int size;
        private final Random random;
        private final MessageDigest digest = sha();
        private long left;

        Feeder(long connectId, int size, long total, long seed) {
            this.connectId = connectId;
            this.size = size;
            this.left = total;
            this.random = new Random(seed);
        }

        long left() {
            return left;
        }

        Packet next() {
            byte[] chunk = new byte[(int) Math.min(size, left)];
            random.nextBytes(chunk);
            digest.update(chunk);
            left -= chunk.length;
            return Packets.data(connectId, ByteString.copyFrom(chunk));
        }

        String sha256() {
            return HexFormat.of().formatHex(digest.digest());
        }
    }

    /**
     * A loopback target that accepts one connection and reads nothing until told (a small receive buffer, so the
     * kernel takes little); then reads and hashes everything.
     */
    private static final class NonReadingTarget implements AutoCloseable {
        private final ServerSocket listener;
        private final CountDownLatch go = new CountDownLatch(1);
        private final MessageDigest digest = sha();
        final AtomicLong received = new AtomicLong();
        final long expected;
        private volatile Socket socket;

        NonReadingTarget(long expected) throws IOException {
            this.expected = expected;
            listener = new ServerSocket();
            listener.setReceiveBufferSize(4096);
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            Thread thread = new Thread(this::run, "non-reading-target");
            thread.setDaemon(true);
            thread.start();
        }

        String address() {
            return "127.0.0.1:" + listener.getLocalPort();
        }

        void startReading() {
            go.countDown();
        }

        private void run() {
            try {
                socket = listener.accept();
                go.await();
                byte[] buffer = new byte[64 * 1024];
                InputStream in = socket.getInputStream();
                int n;
                while (received.get() < expected && (n = in.read(buffer)) > 0) {
                    synchronized (digest) {
                        digest.update(buffer, 0, n);
                    }
                    received.addAndGet(n);
                }
            } catch (IOException | InterruptedException e) {
                // closed by the test
            }
        }

        String sha256() {
            synchronized (digest) {
                return HexFormat.of().formatHex(digest.digest());
            }
        }

        @Override
        public void close() throws IOException {
            go.countDown();
            if (socket != null) {
                socket.close();
            }
            listener.close();
        }
    }

    private static MessageDigest sha() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
