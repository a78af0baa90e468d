package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.proxy.ProxyDialException;
import io.tenantgateway.tunnel.server.ProxyStrategy;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code --proxy-strategies}: destHost, then defaultRoute, then default, tried in the configured order. */
@Timeout(60)
class StrategiesIT extends TunnelTestBase {
    @Test
    void routesByDestinationHostThenDefaultRoute() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("routes")
                .strategies(ProxyStrategy.parse("destHost,defaultRoute"))
                .udsPath(TunnelHarness.socketPath(dir)).build());
        TunnelClientSet hostAgent = agent(server, "ipv4=127.0.0.1&host=node-a");
        TunnelClientSet routeAgent = agent(server, "default-route=true");
        TunnelClientSet plainAgent = agent(server, "");
        TargetServer echo = harness.track(TargetServer.echo());
        ProxyClient client = harness.proxyClient(server);

        for (int i = 0; i < 5; i++) {
            TunnelHarness.dial(client, echo.hostPort(), new ChannelInboundHandlerAdapter());
        }
        assertThat(hostAgent.openTunnels()).isEqualTo(5);
        for (int i = 0; i < 5; i++) {
            TunnelHarness.dial(client, "localhost:" + echo.address().getPort(), new ChannelInboundHandlerAdapter());
        }
        assertThat(routeAgent.openTunnels()).isEqualTo(5);
        assertThat(plainAgent.openTunnels()).isZero();
    }

    @Test
    void destHostAloneRefusesUnknownHosts() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("strict")
                .strategies(ProxyStrategy.parse("destHost")).udsPath(TunnelHarness.socketPath(dir)).build());
        agent(server, "host=node-a");
        ProxyClient client = harness.proxyClient(server);
        try {
            client.dial("127.0.0.1:9", new ChannelInboundHandlerAdapter()).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            throw new AssertionError("dial succeeded");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(ProxyDialException.class).hasMessage("No agent available");
        }
    }

    private TunnelClientSet agent(TunnelServer server, String identifiers) {
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server)
                .agentIdentifiers(AgentIdentifiers.parse(identifiers)).build());
        await().atMost(WAIT).until(agent::isReady);
        return agent;
    }
}
