package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.DownloadTarget;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One bad DIAL_REQ costs one dial, never the stream (issue 24): zone ids that overflow an int and an address that is
 * not UTF-8 get their DIAL_RSP error, while a 64 MiB download on the same stream completes intact; so does an
 * address of three million characters.
 */
@Timeout(90)
class HostilePacketsIT extends HostileServerTestBase {
    private static final long SIZE = 64 * MIB;
    private static final long SEED = 0x5EED_2024L;

    @AutoClose
    private DownloadTarget download;

    /** Starts the agent and, through tunnel 1, a download of {@code size} bytes from {@code seed}. */
    private HostileServer.Received startWithDownload(long size, long seed) throws Exception {
        start();
        download = new DownloadTarget(size, 1);
        return startDownload(download, 1, seed);
    }

    @Test
    void badAddressesGetDialErrorsWhileADownloadOnTheSameStreamCompletes() throws Exception {
        HostileServer.Received received = startWithDownload(SIZE, SEED);
        await().atMost(WAIT).until(() -> received.bytes.get() > 0);

        // While the download runs: hosts whose zone index overflows an int, and an address that is not UTF-8.
        server.send(Packets.dialRequest("[fe80::1%99999999999]:80", 11));
        server.send(Packets.dialRequest("[fe80::1%2147483648]:80", 12));
        server.sendRaw(HostileServer.dialRequestWithRawAddress(
                new byte[] {'1', '2', '7', '.', '0', '.', '0', '.', '1', (byte) 0xff, (byte) 0xfe, ':', '8', '0'}, 13));
        server.send(Packets.dialRequest("[fe80::1%4294967296]:80", 14));

        assertThat(error(11)).isEqualTo("dial tcp [fe80::1%99999999999]:80: address fe80::1%99999999999: malformed host"
                + " (expected: a host name, a.b.c.d without leading zeros, or an IPv6 address)");
        assertThat(error(12))
                .startsWith("dial tcp [fe80::1%2147483648]:80: address fe80::1%2147483648: malformed host");
        assertThat(error(13)).isEqualTo("dial tcp 127.0.0.1\uFFFD\uFFFD:80: address is not valid UTF-8"
                + " (expected: host:port)");
        assertThat(error(14)).startsWith("dial tcp [fe80::1%4294967296]:80: address fe80::1%4294967296: malformed");

        awaitDownload(received, SIZE, SEED);
        // The target closed after the last byte: the tunnel ends with CLOSE_RSP, the stream carries on.
        await().atMost(WAIT).until(() -> server.closeResponses.get() == 1);
        long fresh = server.dial(download.hostPort(), 2);
        assertThat(fresh).isPositive();

        String metrics = metrics();
        assertThat(value(metrics, "tenant_gateway_tunnel_malformed_packets_total", "reason=\"invalid_utf8\""))
                .isEqualTo(1.0);
        assertThat(value(metrics, "tenant_gateway_tunnel_dial_denied_total", "rule=\"malformed host\""))
                .isEqualTo(3.0);
        assertThat(agent.lines("has a string field that is not UTF-8")).as("one WARN").hasSize(1);
        System.out.printf("bad DIAL_REQs refused during a 64 MiB download; %s%n", memoryReport());
        assertThat(peakRss).as("RSS").isLessThan(RSS_LIMIT);
        assertThat(peakDirect).as("direct buffers").isLessThanOrEqualTo(DIRECT_LIMIT);
        assertCleanLog();
    }

    /**
     * A red-team shape issue 24's tests did not cover: one DIAL_REQ whose address is 3,000,003 characters (a legal
     * message: under the 4 MiB + 64 KiB limit). Its dial error echoed the address twice, a 6 MB DIAL_RSP that never
     * went out, and the stream stalled behind it: no answer to it or to any later DIAL_REQ, a concurrent download
     * stopped. Now it gets a short DIAL_RSP error at once and the stream carries on.
     */
    @Test
    void aDialRequestWithAThreeMegabyteAddressGetsAShortErrorAndTheStreamCarriesOn() throws Exception {
        long size = 16 * MIB;
        long seed = 0x5EED_2025L;
        HostileServer.Received received = startWithDownload(size, seed);

        server.send(Packets.dialRequest("a".repeat(3_000_000) + ":80", 77));
        Packet refused = server.dialResponse(77).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(refused.getDialResponse().getError()).startsWith("dial tcp aaaa")
                .endsWith("…: address is 3000003 characters long (expected: host:port, at most 1024)")
                .hasSizeLessThan(200);
        // A later dial on the same stream is answered, and the download completes.
        assertThat(server.dial(download.hostPort(), 2)).isPositive();
        awaitDownload(received, size, seed);
        assertThat(value(metrics(), "tenant_gateway_tunnel_malformed_packets_total", "reason=\"address_too_long\""))
                .isEqualTo(1.0);
        assertCleanLog();
    }

    /**
     * Out of file descriptors ({@code prlimit} lowers the running agent's limit): dials fail with what ran out, in Go's
     * words, one WARN says so, and no stack trace is logged per dial.
     */
    @Test
    void runningOutOfDescriptorsIsNamedInTheDialErrorAndLoggedOnce() throws Exception {
        start();
        echo = io.tenantgateway.agent.testing.TunnelTestbed.newEchoTarget();
        server.dial(echo.hostPort(), 1);
        long pid = agent.process.pid();
        long open;
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc", Long.toString(pid), "fd"))) {
            open = fds.count();
        }
        long limit = open + 4;
        Process prlimit = new ProcessBuilder("prlimit", "--pid", Long.toString(pid), "--nofile=" + limit + ":" + limit)
                .inheritIO().start();
        assertThat(prlimit.waitFor()).as("prlimit --nofile=%d", limit).isZero();

        int dials = 40;
        for (int i = 0; i < dials; i++) {
            server.send(Packets.dialRequest(echo.hostPort(), 1000 + i));
        }
        java.util.List<String> errors = new java.util.ArrayList<>();
        for (int i = 0; i < dials; i++) {
            String error = error(1000 + i);
            if (!error.isEmpty()) {
                errors.add(error);
            }
        }
        System.out.printf("descriptor limit %d: %d of %d dials failed, e.g. %s%n", limit, errors.size(), dials,
                errors.isEmpty() ? "-" : errors.get(0));
        assertThat(errors).isNotEmpty().allSatisfy(error -> assertThat(error)
                .isEqualTo("dial tcp " + echo.hostPort() + ": socket: too many open files"));
        await().atMost(WAIT).until(() -> !agent.lines("ran out of a resource").isEmpty());
        assertThat(agent.lines("ran out of a resource")).as("one WARN").hasSize(1)
                .allSatisfy(line -> assertThat(line).contains("(too many open files)"));
        assertThat(agent.process.isAlive()).isTrue();
        assertCleanLog();
    }

    @AutoClose
    private io.tenantgateway.agent.testing.TunnelTestbed.EchoTarget echo;

    private String error(long random) throws Exception {
        Packet response = server.dialResponse(random).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return response.getDialResponse().getError();
    }
}
