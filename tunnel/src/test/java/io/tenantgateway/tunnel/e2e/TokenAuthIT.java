package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.AgentAuthenticator;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.LogCapture;
import io.tenantgateway.tunnel.testing.Payload;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TransferHandler;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The token-authenticated agent leg (server-side TLS only, bearer token from a file re-read per attempt). */
@Timeout(120)
class TokenAuthIT extends TunnelTestBase {
    private static final long MIB = 1024 * 1024;

    /** A server (Unix socket frontend) whose agents authenticate with the token {@code good-token}. */
    private TunnelServer serverAcceptingGoodToken() {
        return harness.startServer(TunnelHarness.serverConfig("token")
                .agentAuthenticator(AgentAuthenticator.staticTokens(Set.of("good-token")))
                .udsPath(TunnelHarness.socketPath(dir)).build());
    }

    /** Agent node-1, presenting the token in {@code tokenFile} (re-read on every attempt). */
    private TunnelClientSet agentWithToken(TunnelServer server, Path tokenFile) {
        return harness.startAgent(TunnelHarness.agentConfig(server).agentId("node-1")
                .serviceAccountTokenPath(tokenFile).build(), false, new PrometheusRegistry());
    }

    @Test
    void rejectedTokensBackOffWithOneLinePerAttemptUntilTheRotatedTokenIsAccepted() throws Exception {
        TunnelServer server = serverAcceptingGoodToken();
        Path tokenFile = Files.writeString(dir.resolve("token"), "stale-token\n");
        try (LogCapture log = LogCapture.of(TunnelClientSet.class)) {
            TunnelClientSet agent = agentWithToken(server, tokenFile);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> log.lines("cannot connect once").size() >= 4);
            List<String> failures = log.lines("cannot connect once");
            assertThat(failures).allSatisfy(line -> assertThat(line)
                    .contains("code=\"UNAUTHENTICATED\"")
                    .contains("authentication failed: token rejected for agent node-1")
                    .doesNotContain("stale-token"));
            for (int attempt = 1; attempt <= 4; attempt++) {
                String marker = "attempt=" + attempt + " ";
                assertThat(failures.stream().filter(line -> line.contains(marker))).as(marker).hasSize(1);
            }
            List<Long> waits = FaultsIT.retryWaits(failures);
            assertThat(waits.get(1)).isGreaterThan(waits.get(0));
            assertThat(waits.get(2)).isGreaterThan(waits.get(1));
            assertThat(agent.isReady()).isFalse();

            Files.writeString(tokenFile, "good-token"); // the kubelet rotated the projected token
            await().atMost(WAIT).until(agent::isReady);
            assertThat(server.snapshot().agents()).singleElement()
                    .satisfies(a -> assertThat(a.agentId()).isEqualTo("node-1"));
        }
    }

    @Test
    void echoes64MibEachWayOverTheTokenAuthenticatedLeg() throws Exception {
        TunnelServer server = serverAcceptingGoodToken();
        Path tokenFile = Files.writeString(dir.resolve("token"), "good-token");
        TunnelClientSet agent = agentWithToken(server, tokenFile);
        await().atMost(WAIT).until(agent::isReady);
        TargetServer echo = harness.track(TargetServer.echo());
        ProxyClient client = harness.proxyClient(server);
        TransferHandler transfer = new TransferHandler(61, 64 * MIB, 64 * MIB);
        Channel channel = TunnelHarness.dial(client, echo.hostPort(), transfer);
        TransferHandler.Result result = transfer.done().get(90, TimeUnit.SECONDS);
        assertThat(result.receivedSha256()).isEqualTo(result.sentSha256()).isEqualTo(Payload.sha256(61, 64 * MIB));
        channel.close().sync();
    }
}
