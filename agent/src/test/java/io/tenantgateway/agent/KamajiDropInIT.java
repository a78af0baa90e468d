package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tunnel.server.ServerSnapshot;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The built jar started with Kamaji's exact agent argument list is a working konnectivity-agent: it connects with
 * token auth, keeps HAMi parts off, reports tunnel-only readiness, and on SIGTERM drains without cutting a tunnel.
 */
@Timeout(180)
class KamajiDropInIT extends AgentProcessTestBase {
    @Test
    void kamajiArgumentsGiveAPureKonnectivityAgentThatDrainsOnSigterm() throws Exception {
        int health = startWithKamajiArgs("60s");

        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        assertThat(agent.lines("running as a pure konnectivity-agent")).as("log:%n%s", String.join("\n", agent.log))
                .hasSize(1);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> ready = LoopbackHttp.get(health, "/readyz?verbose");
            assertThat(ready.statusCode()).isEqualTo(200);
            // Tunnel only: no webhook, device or lock-controller checks.
            assertThat(ready.body()).isEqualTo("[+]shutdown ok\n[+]server-connected ok\nreadyz check passed\n");
        });
        assertThat(LoopbackHttp.get(health, "/metrics").body()).contains("konnectivity_network_proxy_agent_open_server_connections");

        TunnelTestbed.Tunnel tunnel = testbed.dialEcho();
        assertThat(tunnel.echo("before sigterm")).isEqualTo("before sigterm");

        Instant sigterm = Instant.now();
        agent.signal("TERM");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(testbed.server.snapshot().agents())
                .singleElement().extracting(ServerSnapshot.Agent::draining).isEqualTo(true));
        HttpResponse<String> draining = LoopbackHttp.get(health, "/readyz");
        assertThat(draining.statusCode()).isEqualTo(503);
        assertThat(draining.body()).contains("[-]shutdown failed: draining");

        // The open tunnel keeps working while the agent drains; the process waits for it.
        assertThat(tunnel.echo("while draining")).isEqualTo("while draining");
        assertThat(agent.process.isAlive()).isTrue();

        tunnel.close();
        assertThat(agent.awaitExit(Duration.ofSeconds(30))).as("exit code; log:%n%s", String.join("\n", agent.log))
                .isZero();
        assertThat(Duration.between(sigterm, Instant.now())).isLessThan(Duration.ofSeconds(60));
        assertThat(agent.lines("drained: no open tunnels")).hasSize(1);
        assertThat(agent.log.stream().filter(line -> line.startsWith("E"))).as("klog error lines").isEmpty();
    }

    @Test
    void secondSigtermExitsAtOnce() throws Exception {
        startWithKamajiArgs("120s");
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        TunnelTestbed.Tunnel tunnel = testbed.dialEcho();
        assertThat(tunnel.echo("x")).isEqualTo("x");

        agent.signal("TERM");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(agent.lines("draining (send it again"))
                .as("log:%n%s", String.join("\n", agent.log)).isNotEmpty());
        assertThat(agent.process.isAlive()).as("first SIGTERM waits for the open tunnel").isTrue();
        agent.signal("TERM");
        assertThat(agent.awaitExit(Duration.ofSeconds(30))).isEqualTo(143);
    }

    /** Starts the jar with Kamaji's argument list and {@code --shutdown-grace}; returns the health port. */
    private int startWithKamajiArgs(String shutdownGrace) throws java.io.IOException {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.add("--shutdown-grace=" + shutdownGrace);
        agent = AgentProcess.start(args);
        return agent.healthPort();
    }
}
