package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.proxy.ProxyDialException;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue #16: spellings of loopback and of the unspecified address, through a running agent and the Java server,
 * against a wildcard-bound (dual-stack) listener, which every local address reaches. Denied spellings must be
 * refused by the policy, allowed ones must reach the listener (it greets every connection).
 */
@Timeout(120)
class DialPolicyBypassIT extends TunnelTestBase {
    private ServerSocket wildcard;
    private int port;

    @BeforeEach
    void listen() throws IOException {
        wildcard = new ServerSocket();
        wildcard.bind(new InetSocketAddress(0)); // the wildcard address: dual-stack where IPv6 is available
        port = wildcard.getLocalPort();
        Thread acceptor = new Thread(() -> {
            while (!wildcard.isClosed()) {
                try (Socket socket = wildcard.accept(); OutputStream out = socket.getOutputStream()) {
                    out.write("hello".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // closed at the end of the test, or a peer that went away; the assertions tell
                }
            }
        }, "wildcard-listener");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopListening() throws IOException {
        wildcard.close();
    }

    private static final String DENY_LOOPBACK = """
            127.0.0.1            denied
            127.0.0.2            denied
            127.255.255.254      denied
            ::1                  denied
            [::1]                denied
            0:0:0:0:0:0:0:1      denied
            0000:0000:0000:0000:0000:0000:0000:0001 denied
            ::0001               denied
            ::ffff:127.0.0.1     denied
            ::FFFF:127.0.0.1     denied
            ::ffff:7f00:1        denied
            ::FFFF:7F00:0001     denied
            [::ffff:127.0.0.2]   denied
            ::127.0.0.1          denied
            0.0.0.0              denied
            ::                   denied
            [::]                 denied
            0:0:0:0:0:0:0:0      denied
            0000::0000           denied
            ::ffff:0.0.0.0       denied
            ::ffff:0:0           denied
            ::FFFF:0000:0000     denied
            ::0.0.0.0            denied
            localhost            denied
            LOCALHOST            denied
            localhost.           denied
            LocalHost.           denied
            127.1                malformed
            127.0.1              malformed
            2130706433           malformed
            017700000001         malformed
            0x7f.0.0.1           malformed
            0X7F.0.0.1           malformed
            0x7f000001           malformed
            0x7f.1               malformed
            127.000.000.001      malformed
            0127.0.0.1           malformed
            127.0.0.01           malformed
            127.0.0.1.           malformed
            0                    malformed
            0.0                  malformed
            0x0                  malformed
            000.000.000.000      malformed
            127.0.0.1.0          malformed
            127.0.0.1%lo         malformed
            ::ffff:127.000.0.1   malformed
            ::1%                 malformed
            ::1::                malformed
            00000::1             malformed
            """;

    private static final String DENY_ONE = """
            127.0.0.1            reached
            127.0.0.3            reached
            127.255.255.254      reached
            ::1                  reached
            [::1]                reached
            0:0:0:0:0:0:0:1      reached
            ::ffff:127.0.0.1     reached
            ::FFFF:7F00:1        reached
            localhost            reached
            LOCALHOST            reached
            localhost.           reached
            LocalHost.           reached
            127.0.0.2            denied
            ::ffff:127.0.0.2     denied
            ::ffff:7f00:2        denied
            [::FFFF:7F00:0002]   denied
            0.0.0.0              denied
            ::                   denied
            ::ffff:0.0.0.0       denied
            127.2                malformed
            127.000.000.002      malformed
            """;

    private static final String ALLOW_V4_LOOPBACK = """
            127.0.0.1            reached
            127.0.0.2            reached
            ::ffff:127.0.0.1     reached
            localhost            reached
            LOCALHOST.           reached
            ::1                  denied
            [::1]                denied
            0.0.0.0              denied
            ::                   denied
            ::ffff:0.0.0.0       denied
            127.1                malformed
            """;

    @Test
    void denyingLoopbackDeniesEverySpellingOfTheLocalHost() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        int count = run(DialPolicy.of(List.of(), List.of("127.0.0.0/8", "::1/128"), List.of(), List.of(), List.of(),
                List.of()), DENY_LOOPBACK, registry);
        assertThat(count).isGreaterThanOrEqualTo(49);
        assertThat(denied(registry, "deny cidr 127.0.0.0/8")).isGreaterThan(0);
        assertThat(denied(registry, "unspecified address is the local host: deny cidr 127.0.0.0/8")).isGreaterThan(0);
        assertThat(denied(registry, "deny cidr 127.0.0.0/8 (embedded IPv4)")).isEqualTo(1);
        assertThat(denied(registry, DialPolicy.MALFORMED)).isEqualTo(22);
    }

    @Test
    void theAgentsDefaultDeniesEverySpellingOfTheLocalHost() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        int count = run(DialPolicy.ALLOW_ALL.withDefaults(DialPolicy.Defaults.agent(0)), DENY_LOOPBACK, registry);
        assertThat(denied(registry, DialPolicy.DEFAULT_LOOPBACK)).isEqualTo(count - 22);
        assertThat(denied(registry, DialPolicy.MALFORMED)).isEqualTo(22);
    }

    @Test
    void theAdminPortStaysClosedOnEverySpellingWhenEverythingIsAllowed() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        // The listener's port plays the agent's admin port; upstream's allow-all through --dial-allow.
        int count = run(DialPolicy.of(List.of("0.0.0.0/0", "::/0"), List.of(), List.of(), List.of(), List.of(),
                List.of()).withDefaults(DialPolicy.Defaults.agent(port)), DENY_LOOPBACK, registry);
        assertThat(denied(registry, DialPolicy.ADMIN_PORT)).isEqualTo(count - 22);
    }

    @Test
    void aDenyOnlyPolicyAllowsNamesAndTheRest() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        run(DialPolicy.of(List.of(), List.of("127.0.0.2/32"), List.of(), List.of(), List.of(), List.of()), DENY_ONE,
                registry);
        assertThat(denied(registry, DialPolicy.HOST_NOT_ALLOWED)).isZero();
    }

    @Test
    void anAllowListAdmitsOnlyItsNetworks() throws Exception {
        run(DialPolicy.of(List.of("127.0.0.0/8"), List.of(), List.of(), List.of(), List.of(), List.of()),
                ALLOW_V4_LOOPBACK, new PrometheusRegistry());
    }

    /** Runs every case of {@code table} through a fresh server and agent with {@code policy}; returns the count. */
    private int run(DialPolicy policy, String table, PrometheusRegistry registry) throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("bypass")
                .udsPath(TunnelHarness.socketPath(dir)).build());
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server).dialPolicy(policy).build(),
                true, registry);
        await().atMost(WAIT).until(agent::isReady);
        ProxyClient client = harness.proxyClient(server);
        List<String> failures = new ArrayList<>();
        int count = 0;
        for (String line : table.strip().split("\n")) {
            String[] parts = line.strip().split("\\s+");
            String host = parts[0];
            String expected = parts[1];
            String address = (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
            String outcome = dial(client, address);
            boolean ok = switch (expected) {
                case "reached" -> outcome.equals("reached");
                case "denied" -> outcome.startsWith("dial to " + address + " denied by policy (");
                case "malformed" -> outcome.startsWith("dial tcp " + address + ": address ")
                        && outcome.contains("malformed host");
                default -> throw new IllegalArgumentException(line);
            };
            if (!ok) {
                failures.add(host + ": expected " + expected + ", got " + outcome);
            }
            count++;
        }
        if (!failures.isEmpty()) {
            fail(String.join("\n", failures));
        }
        await().atMost(WAIT).until(() -> agent.openTunnels() == 0);
        return count;
    }

    /** "reached" when the listener's greeting came through the tunnel, else the dial error. */
    private static String dial(ProxyClient client, String address) throws Exception {
        CompletableFuture<String> greeting = new CompletableFuture<>();
        Channel channel;
        try {
            channel = client.dial(address, new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf buf = (ByteBuf) msg;
                    try {
                        greeting.complete(buf.toString(StandardCharsets.US_ASCII));
                    } finally {
                        buf.release();
                    }
                }
            }).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(ProxyDialException.class);
            return e.getCause().getMessage();
        }
        try {
            channel.read();
            return greeting.get(WAIT.toSeconds(), TimeUnit.SECONDS).startsWith("h") ? "reached" : "wrong greeting";
        } finally {
            channel.close().sync();
        }
    }

    private static double denied(PrometheusRegistry registry, String rule) {
        return registry.scrape().stream()
                .filter(m -> m.getMetadata().getName().equals("tenant_gateway_tunnel_dial_denied"))
                .flatMap(m -> ((CounterSnapshot) m).getDataPoints().stream())
                .filter(p -> rule.equals(p.getLabels().get("rule")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }
}
