package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.tenantgateway.tunnel.client.DrainReport;
import io.tenantgateway.tunnel.client.TunnelClient;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.ServerSnapshot;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.Payload;
import io.tenantgateway.tunnel.testing.RoundRobinBalancer;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TransferHandler;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Agent shutdown: {@code drain()} sends DRAIN on every server stream, the servers route new dials to the other
 * agent, tunnels already open on the draining agent keep working until {@code close()}.
 */
@Timeout(120)
class DrainIT extends TunnelTestBase {
    @Test
    void drainingAgentGetsNoNewDialsWhileItsTunnelsFinish() throws Exception {
        TunnelServer s1 = harness.startServer(TunnelHarness.serverConfig("s1").serverCount(2)
                .udsPath(dir.resolve("s1.socket")).build());
        TunnelServer s2 = harness.startServer(TunnelHarness.serverConfig("s2").serverCount(2).build());
        RoundRobinBalancer balancer = harness.track(new RoundRobinBalancer(List.of(s1.agentAddress(),
                s2.agentAddress())));
        TunnelClientSet leaving = harness.startAgent(TunnelHarness.agentConfig(s1).agentId("leaving")
                .proxyServerPort(balancer.port()).build());
        TunnelClientSet staying = harness.startAgent(TunnelHarness.agentConfig(s1).agentId("staying")
                .proxyServerPort(balancer.port()).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(leaving.connections()).containsOnlyKeys("s1", "s2");
            assertThat(staying.connections()).containsOnlyKeys("s1", "s2");
        });
        TargetServer echo = harness.track(TargetServer.echo());
        ProxyClient client = harness.proxyClient(s1);

        // Open tunnels until one lands on the agent that will leave (the default strategy picks at random).
        List<Channel> opened = new ArrayList<>();
        while (leaving.openTunnels() == 0) {
            TransferHandler probe = new TransferHandler(1, 10, 10);
            opened.add(TunnelHarness.dial(client, echo.hostPort(), probe));
            probe.done().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(opened).hasSizeLessThan(64);
        }
        // The tunnel on the leaving agent is the last one opened.
        Channel onLeaving = opened.get(opened.size() - 1);

        leaving.drain();
        await().atMost(WAIT).untilAsserted(() -> {
            for (TunnelServer server : List.of(s1, s2)) {
                assertThat(server.snapshot().agents()).filteredOn(a -> a.agentId().equals("leaving"))
                        .singleElement().satisfies(a -> assertThat(a.draining()).isTrue());
            }
        });
        assertThat(leaving.connections()).containsValues(TunnelClient.State.DRAINING);

        int leavingBefore = leaving.openTunnels();
        int stayingBefore = staying.openTunnels();
        List<Channel> afterDrain = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            TransferHandler transfer = new TransferHandler(100 + i, 10, 10);
            afterDrain.add(TunnelHarness.dial(client, echo.hostPort(), transfer));
            transfer.done().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(leaving.openTunnels()).isEqualTo(leavingBefore);
        assertThat(staying.openTunnels()).isEqualTo(stayingBefore + 20);

        // The tunnel opened before the drain still carries data.
        TransferHandler more = new TransferHandler(72, 1024 * 1024, 1024 * 1024);
        onLeaving.pipeline().replace(TransferHandler.class, "more", more);
        assertThat(more.done().get(30, TimeUnit.SECONDS).receivedSha256())
                .isEqualTo(Payload.sha256(72, 1024 * 1024));

        leaving.close();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(onLeaving.isOpen()).isFalse();
            assertThat(s1.snapshot().agents()).extracting(ServerSnapshot.Agent::agentId).containsOnly("staying");
        });
    }

    @Test
    void drainAndCloseWaitsForTheTunnelThenEndsTheStreamGracefully() throws Exception {
        OneTunnel one = oneTunnel();

        CompletableFuture<DrainReport> report = one.agent().drainAndClose(Instant.now().plusSeconds(60));

        // The stream stays open while the tunnel is: it still carries data both ways.
        TransferHandler more = new TransferHandler(72, 1024 * 1024, 1024 * 1024);
        one.tunnel().pipeline().replace(TransferHandler.class, "more", more);
        assertThat(more.done().get(30, TimeUnit.SECONDS).receivedSha256())
                .isEqualTo(Payload.sha256(72, 1024 * 1024));
        assertThat(report).isNotDone();

        // The client ends the tunnel (CLOSE_REQ / CLOSE_RSP); then the agent half-closes and the server ends the
        // stream with OK.
        one.tunnel().close();
        DrainReport done = report.get(30, TimeUnit.SECONDS);
        assertThat(done.lossless()).as("%s", done).isTrue();
        assertThat(done.servers()).singleElement().satisfies(result -> {
            assertThat(result.serverId()).isEqualTo("s1");
            assertThat(result.status().isOk()).as("%s", result.status()).isTrue();
        });
        await().atMost(WAIT).untilAsserted(() -> assertThat(one.server().snapshot().agents())
                .isEmpty());
    }

    @Test
    void graceOverCutsTheTunnelsLeftAndCountsThem() throws Exception {
        OneTunnel one = oneTunnel();

        DrainReport done = one.agent().drainAndClose(Instant.now().plusMillis(500)).get(30, TimeUnit.SECONDS);

        assertThat(done.lossless()).isFalse();
        assertThat(done.tunnelsCut()).isEqualTo(1);
        assertThat(done.describeCuts()).isEqualTo("s1=1 tunnel(s)");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(one.tunnel().isOpen()).isFalse();
            assertThat(one.server().snapshot().agents()).isEmpty();
        });
    }

    /** An upstream-mode server ("s1"), an agent connected to it, and one tunnel to an echo target that works. */
    private record OneTunnel(TunnelServer server, TunnelClientSet agent, Channel tunnel) {
    }

    private OneTunnel oneTunnel() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("s1").flowControl(false)
                .udsPath(dir.resolve("s1.socket")).build());
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server).agentId("leaving").build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(agent.connections())
                .containsOnlyKeys("s1"));
        TargetServer echo = harness.track(TargetServer.echo());
        ProxyClient client = harness.proxyClient(server);
        TransferHandler first = new TransferHandler(1, 10, 10);
        Channel tunnel = TunnelHarness.dial(client, echo.hostPort(), first);
        first.done().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return new OneTunnel(server, agent, tunnel);
    }
}
