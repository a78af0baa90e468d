package io.tenantgateway.tunnel.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.RoundRobinBalancer;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Three servers behind one round-robin balancer address: the agent holds exactly one connection to each. */
@Timeout(120)
class HighAvailabilityIT {
    @RegisterExtension
    final TunnelHarness harness = new TunnelHarness();


    @Test
    void keepsOneConnectionPerServerAsServersComeAndGo() {
        List<TunnelServer> servers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            servers.add(harness.startServer(TunnelHarness.serverConfig("s" + i).serverCount(3).build()));
        }
        RoundRobinBalancer balancer = harness.track(new RoundRobinBalancer(servers.stream()
                .map(TunnelServer::agentAddress).toList()));
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(servers.get(0))
                .proxyServerPort(balancer.port()).build());

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(agent.connections()).containsOnlyKeys("s1", "s2", "s3");
            assertThat(servers).allSatisfy(s -> assertThat(s.agentCount()).isEqualTo(1));
        });
        assertThat(agent.serverCount()).isEqualTo(3);

        int port2 = servers.get(1).agentAddress().getPort();
        servers.get(1).close();
        // Still short of servercount, the agent keeps dialling; the balancer hands it s1 and s3 again, which
        // it closes as duplicates at once, so it settles at exactly the two live servers.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(agent.connections()).containsOnlyKeys("s1", "s3"));

        TunnelServer restarted = harness.startServer(TunnelHarness.serverConfig("s2").serverCount(3)
                .agentAddress(new InetSocketAddress("127.0.0.1", port2)).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(agent.connections()).containsOnlyKeys("s1", "s2", "s3");
            assertThat(restarted.agentCount()).isEqualTo(1);
            assertThat(servers.get(0).agentCount()).isEqualTo(1);
            assertThat(servers.get(2).agentCount()).isEqualTo(1);
        });
    }
}
