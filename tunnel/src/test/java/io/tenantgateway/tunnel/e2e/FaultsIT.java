package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.proxy.ProxyDialException;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.FullListener;
import io.tenantgateway.tunnel.testing.LogCapture;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TransferHandler;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Servers dying, dials failing, and what the agent does about it. */
@Timeout(120)
class FaultsIT extends TunnelTestBase {
    @Test
    void killedServerClosesItsTunnelsReleasesSocketsAndTheAgentReconnectsWithBackoff() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("doomed")
                .udsPath(TunnelHarness.socketPath(dir)).build());
        int agentPort = server.agentAddress().getPort();
        TargetServer echo = harness.track(TargetServer.echo());
        try (LogCapture log = LogCapture.of(TunnelClientSet.class)) {
            TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server).build());
            await().atMost(WAIT).until(agent::isReady);
            ProxyClient client = ProxyClient.builder().unixSocket(server.udsPath()).build();
            List<Channel> channels = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                TransferHandler transfer = new TransferHandler(i, 1000, 1000);
                channels.add(TunnelHarness.dial(client, echo.hostPort(), transfer));
                transfer.done().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertThat(agent.openTunnels()).isEqualTo(5);
            assertThat(echo.openConnections()).isEqualTo(5);

            server.close();

            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(agent.openTunnels()).isZero();
                assertThat(echo.openConnections()).isZero(); // the agent closed every target socket
                assertThat(channels).allSatisfy(ch -> assertThat(ch.isOpen()).isFalse());
                assertThat(agent.isReady()).isFalse();
            });
            client.close();
            await().atMost(WAIT)
                    .until(() -> log.lines("cannot connect once").size() >= 3);
            List<Long> waits = retryWaits(log.lines("cannot connect once"));
            assertThat(waits.get(1)).isGreaterThan(waits.get(0));
            assertThat(waits.get(2)).isGreaterThan(waits.get(1));

            TunnelServer again = harness.startServer(TunnelHarness.serverConfig("reborn")
                    .agentAddress(new InetSocketAddress("127.0.0.1", agentPort)).build());
            await().atMost(WAIT).untilAsserted(() ->
                    assertThat(agent.connections()).containsOnlyKeys("reborn"));
            assertThat(again.agentCount()).isEqualTo(1);
        }
    }

    @Test
    void dialErrorsComeBackAsDialResponses() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("dials")
                .udsPath(TunnelHarness.socketPath(dir)).build());
        ProxyClient client = harness.proxyClient(server);
        assertThat(dialError(client, "127.0.0.1:9")).isEqualTo("No agent available");

        PrometheusRegistry registry = new PrometheusRegistry();
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server)
                .dialTimeout(Duration.ofMillis(500))
                .dialPolicy(DialPolicy.of(List.of(), List.of(), List.of(), List.of(), List.of(), List.of("7")))
                .build(), true, registry);
        await().atMost(WAIT).until(agent::isReady);

        int closedPort;
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = listener.getLocalPort();
        }
        assertThat(dialError(client, "127.0.0.1:" + closedPort))
                .isEqualTo("dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused");
        try (FullListener full = FullListener.open()) {
            assertThat(dialError(client, full.address())).isEqualTo("dial tcp " + full.address() + ": i/o timeout");
        }
        assertThat(dialError(client, "127.0.0.1:7")).isEqualTo("dial to 127.0.0.1:7 denied by policy (deny port 7)");

        assertThat(counter(registry, "konnectivity_network_proxy_agent_endpoint_dial_failure", "timeout"))
                .isEqualTo(1);
        assertThat(counter(registry, "konnectivity_network_proxy_agent_endpoint_dial_failure", "unknown"))
                .isEqualTo(1);
        assertThat(counter(registry, "tenant_gateway_tunnel_dial_denied", null)).isEqualTo(1);
        assertThat(agent.openTunnels()).isZero();
        assertThat(server.pendingDialCount()).isZero();
    }

    @Test
    void aClientGivingUpSendsDialCloseAndTheAgentCancelsTheDial() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("impatient")
                .udsPath(TunnelHarness.socketPath(dir)).build());
        // The agent's own dial timeout is far beyond the wait below: only the client's DIAL_CLS can end the dial.
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server)
                .dialTimeout(WAIT.multipliedBy(10)).build());
        await().atMost(WAIT).until(agent::isReady);
        try (FullListener full = FullListener.open();
                ProxyClient client = ProxyClient.builder().unixSocket(server.udsPath())
                        .dialTimeout(Duration.ofMillis(300)).build()) {
            assertThat(dialError(client, full.address())).isEqualTo("dial timeout, backstop");
            // DIAL_CLS reached the agent: the pending dial is gone long before the agent's own timeout.
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(agent.openTunnels()).isZero();
                assertThat(server.pendingDialCount()).isZero();
            });
        }
    }

    private static String dialError(ProxyClient client, String address) throws Exception {
        try {
            Channel channel = client.dial(address, new ChannelInboundHandlerAdapter()).get(30, TimeUnit.SECONDS);
            channel.close();
            throw new AssertionError("dial to " + address + " succeeded");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(ProxyDialException.class);
            return e.getCause().getMessage();
        }
    }

    private static double counter(PrometheusRegistry registry, String name, String reason) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals(name))
                .flatMap(m -> ((CounterSnapshot) m).getDataPoints().stream())
                .filter(p -> reason == null || reason.equals(p.getLabels().get("reason")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }

    static List<Long> retryWaits(List<String> lines) {
        Pattern retry = Pattern.compile("retryIn=\"(\\d+)(ms|s)\"");
        List<Long> waits = new ArrayList<>();
        for (String line : lines) {
            Matcher matcher = retry.matcher(line);
            assertThat(matcher.find()).as(line).isTrue();
            long value = Long.parseLong(matcher.group(1));
            waits.add(matcher.group(2).equals("s") ? value * 1000 : value);
        }
        return waits;
    }
}
