package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the control plane can reach on the node through the agent as deployed ({@code bin/tenant-gateway run},
 * Kamaji's arguments, our Java konnectivity-server, a ProxyService client dialling as kube-apiserver does): by
 * default not the agent's own admin port, not loopback or {@code localhost}, not link-local (cloud metadata) — each
 * DIAL_RSP error names the rule, and {@code tenant_gateway_tunnel_dial_denied_total{rule}} counts it;
 * {@code --dial-allow=127.0.0.0/8} opens loopback but never the admin port.
 *
 * <p>169.254.169.254 and fe80:: are only ever asked for: the policy denies them before any connect, so nothing
 * leaves the machine (the assertion is on that denial).
 */
@Timeout(90)
class DefaultDialPolicyIT extends AgentProcessTestBase {

    @Test
    void theDefaultDeniesTheAdminPortLoopbackLocalhostAndLinkLocalNamingTheRule() throws Exception {
        testbed = new TunnelTestbed(dir);
        agent = AgentProcess.launch(new ArrayList<>(testbed.kamajiArgs())); // no --dial-allow: the default
        int admin = agent.adminPort();
        int health = agent.healthPort();
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        int echo = Integer.parseInt(testbed.echo.hostPort().substring("127.0.0.1:".length()));

        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("127.0.0.1:" + admin, "agent admin port");
        expected.put("localhost:" + admin, "agent admin port");
        expected.put("0.0.0.0:" + admin, "agent admin port");
        expected.put("127.0.0.1:" + echo, "default: loopback");
        expected.put("localhost:" + echo, "default: loopback");
        expected.put("127.0.0.1:" + health, "default: loopback");
        expected.put("[::1]:" + echo, "default: loopback");
        expected.put("169.254.169.254:80", "default: link-local");
        expected.put("[fe80::1]:80", "default: link-local");
        for (Map.Entry<String, String> entry : expected.entrySet()) {
            assertThat(dialError(entry.getKey())).as(entry.getKey())
                    .isEqualTo("dial to " + entry.getKey() + " denied by policy (" + entry.getValue() + ")");
        }

        String metrics = LoopbackHttp.get(health, "/metrics").body();
        assertThat(metrics).contains("tenant_gateway_tunnel_dial_denied_total{rule=\"agent admin port\"} 3.0",
                "tenant_gateway_tunnel_dial_denied_total{rule=\"default: loopback\"} 4.0",
                "tenant_gateway_tunnel_dial_denied_total{rule=\"default: link-local\"} 2.0");
        // The policy in force, with the admin port the agent bound (--admin-server-port=0).
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).contains("denied: agent admin port " + admin
                + " on this host (loopback, unspecified, localhost").contains("no allow list");
        assertThat(agent.lines("dial denied by policy")).as("one INFO line per denial, no stack trace")
                .hasSize(expected.size());
        assertThat(agent.process.isAlive()).isTrue();
    }

    @Test
    void namingLoopbackOpensItButNeverTheAdminPort() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK);
        agent = AgentProcess.launch(args);
        int admin = agent.adminPort();
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);

        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("loopback is open")).isEqualTo("loopback is open");
        }
        for (String address : List.of("127.0.0.1:" + admin, "localhost:" + admin, "0.0.0.0:" + admin)) {
            assertThat(dialError(address)).as(address)
                    .isEqualTo("dial to " + address + " denied by policy (agent admin port)");
        }
        assertThat(dialError("169.254.169.254:80"))
                .isEqualTo("dial to 169.254.169.254:80 denied by policy (default: link-local)");
        assertThat(LoopbackHttp.get(admin, "/debug/config").body()).contains("no allow list, opened: [127.0.0.0/8]");
    }

    /** Dials {@code address} through the server and returns the agent's DIAL_RSP error. */
    private String dialError(String address) throws InterruptedException, java.util.concurrent.TimeoutException {
        CompletableFuture<?> dial = testbed.dial(address, new ChannelInboundHandlerAdapter());
        try {
            dial.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause().getMessage();
        }
        throw new AssertionError("dial to " + address + " succeeded (expected: denied by policy)");
    }
}
