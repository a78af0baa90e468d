package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.DownloadTarget;
import io.tenantgateway.agent.testing.HostileServer;
import io.tenantgateway.agent.testing.HostileServerTestBase;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A red-team shape issue 24's tests did not cover: one DIAL_REQ whose address is 3,000,003 characters (a legal
 * message: under the 4 MiB + 64 KiB limit). Its dial error echoed the address twice, a 6 MB DIAL_RSP that never went
 * out, and the stream stalled behind it: no answer to it or to any later DIAL_REQ, a concurrent download stopped.
 * Now it gets a short DIAL_RSP error at once and the stream carries on.
 */
@Timeout(90)
class HostileLongAddressIT extends HostileServerTestBase {
    private static final long SIZE = 16 * MIB;
    private static final long SEED = 0x5EED_2025L;

    @AutoClose
    private DownloadTarget download;

    @Test
    void aDialRequestWithAThreeMegabyteAddressGetsAShortErrorAndTheStreamCarriesOn() throws Exception {
        start();
        download = new DownloadTarget(SIZE, 1);
        HostileServer.Received received = startDownload(download, 1, SEED);

        server.send(Packets.dialRequest("a".repeat(3_000_000) + ":80", 77));
        Packet refused = server.dialResponse(77).get(20, TimeUnit.SECONDS);
        assertThat(refused.getDialResponse().getError()).startsWith("dial tcp aaaa")
                .endsWith("…: address is 3000003 characters long (expected: host:port, at most 1024)")
                .hasSizeLessThan(200);
        // A later dial on the same stream is answered, and the download completes.
        assertThat(server.dial(download.hostPort(), 2)).isPositive();
        awaitDownload(received, SIZE, SEED);
        assertThat(value(metrics(), "tenant_gateway_tunnel_malformed_packets_total", "reason=\"address_too_long\""))
                .isEqualTo(1.0);
        assertCleanLog();
    }
}
