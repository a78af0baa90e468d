package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.tunnel.client.AgentSnapshot;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.HttpTarget;
import io.tenantgateway.tunnel.testing.Payload;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TransferHandler;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * client → Java server → agent → real target, with the agent leg on mTLS: bulk transfers (echo and HTTP,
 * 64 MiB each way, SHA-256 checked), 200 concurrent tunnels, metrics and snapshots.
 */
@Timeout(180)
class EndToEndIT {
    private static final int MIB = 1024 * 1024;

    @TempDir
    static Path dir;
    static TunnelHarness harness;
    static TunnelServer server;
    static TunnelClientSet agent;
    static PrometheusRegistry registry = new PrometheusRegistry();
    static TargetServer echo;
    static HttpTarget http;

    @BeforeAll
    static void start() {
        harness = new TunnelHarness();
        echo = harness.track(TargetServer.echo());
        http = harness.track(new HttpTarget());
        server = harness.startServer(TunnelHarness.serverConfig("e2e")
                .agentClientAuth(ClientAuthMode.REQUIRE)
                .udsPath(TunnelHarness.socketPath(dir))
                .frontendAddress(new InetSocketAddress("127.0.0.1", 0))
                .frontendTls(TunnelHarness.PKI.serverMaterial())
                .build());
        agent = harness.startAgent(TunnelHarness.agentConfig(server).build(), true, registry);
        await().atMost(WAIT).until(agent::isReady);
    }

    @AfterAll
    static void stop() {
        harness.close();
    }

    @Test
    void echoes64MibEachWayOverTheUnixSocketFrontend() throws Exception {
        try (ProxyClient client = ProxyClient.builder().unixSocket(server.udsPath()).build()) {
            TransferHandler transfer = new TransferHandler(11, 64L * MIB, 64L * MIB);
            long start = System.nanoTime();
            Channel channel = TunnelHarness.dial(client, echo.hostPort(), transfer);
            TransferHandler.Result result = transfer.done().get(120, TimeUnit.SECONDS);
            System.out.printf("echo 64 MiB each way: %d ms%n", (System.nanoTime() - start) / 1_000_000);
            assertThat(result.receivedBytes()).isEqualTo(64L * MIB);
            assertThat(result.receivedSha256()).isEqualTo(result.sentSha256())
                    .isEqualTo(Payload.sha256(11, 64L * MIB));
            channel.close().sync();
        }
    }

    @Test
    void posts64MibAndReceives64MibOverHttpThroughTheMtlsFrontend() throws Exception {
        try (ProxyClient client = ProxyClient.builder()
                .tcp(server.frontendAddress(), TunnelHarness.PKI.clientMaterial()).build()) {
            HttpTarget.Upload upload = new HttpTarget.Upload(21, 64L * MIB, 22, 64L * MIB);
            long start = System.nanoTime();
            Channel channel = TunnelHarness.dial(client, http.hostPort(), upload.pipeline());
            HttpTarget.Upload.Result result = upload.done().get(120, TimeUnit.SECONDS);
            System.out.printf("HTTP 64 MiB each way: %d ms%n", (System.nanoTime() - start) / 1_000_000);
            assertThat(result.status()).isEqualTo(200);
            assertThat(result.serverSawSha256()).isEqualTo(result.sentSha256())
                    .isEqualTo(Payload.sha256(21, 64L * MIB));
            assertThat(result.receivedBytes()).isEqualTo(64L * MIB);
            assertThat(result.receivedSha256()).isEqualTo(Payload.sha256(22, 64L * MIB));
            channel.close().sync();
        }
    }

    @Test
    void carries200ConcurrentTunnels() throws Exception {
        try (ProxyClient client = ProxyClient.builder().unixSocket(server.udsPath()).connections(2).build()) {
            List<TransferHandler> transfers = new ArrayList<>();
            List<CompletableFuture<Channel>> dials = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                TransferHandler transfer = new TransferHandler(1000 + i, 64 * 1024, 64 * 1024);
                transfers.add(transfer);
                dials.add(client.dial(echo.hostPort(), transfer));
            }
            CompletableFuture.allOf(dials.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(agent.snapshot().tunnels()).hasSizeGreaterThanOrEqualTo(200));
            Set<Long> connectIds = agent.snapshot().tunnels().stream()
                    .map(t -> t.connectId()).collect(Collectors.toSet());
            assertThat(connectIds).hasSizeGreaterThanOrEqualTo(200);
            for (int i = 0; i < 200; i++) {
                TransferHandler.Result result = transfers.get(i).done().get(60, TimeUnit.SECONDS);
                assertThat(result.receivedSha256()).as("tunnel %d", i)
                        .isEqualTo(result.sentSha256()).isEqualTo(Payload.sha256(1000 + i, 64 * 1024));
            }
            for (CompletableFuture<Channel> dial : dials) {
                dial.get().close();
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(agent.openTunnels()).isZero();
                assertThat(server.tunnelCount()).isZero();
            });
        }
    }

    @Test
    void exposesUpstreamMetricNamesAndSnapshots() throws Exception {
        try (ProxyClient client = ProxyClient.builder().unixSocket(server.udsPath()).build()) {
            TransferHandler transfer = new TransferHandler(5, 1000, 1000);
            Channel channel = TunnelHarness.dial(client, echo.hostPort(), transfer);
            transfer.done().get(30, TimeUnit.SECONDS);
            AgentSnapshot snapshot = agent.snapshot();
            assertThat(snapshot.servers()).singleElement().satisfies(s -> {
                assertThat(s.serverId()).isEqualTo("e2e");
                assertThat(s.state()).isEqualTo("READY");
                assertThat(s.flowControl()).isTrue();
            });
            assertThat(snapshot.tunnels()).anySatisfy(t -> {
                assertThat(t.address()).isEqualTo(echo.hostPort());
                assertThat(t.bytesToTarget()).isEqualTo(1000);
                assertThat(t.bytesFromTarget()).isEqualTo(1000);
                assertThat(t.age().isNegative()).isFalse();
            });
            assertThat(server.snapshot().tunnels()).anySatisfy(t -> assertThat(t.address())
                    .isEqualTo(echo.hostPort()));
            channel.close().sync();

            Set<String> names = registry.scrape().stream().map(m -> m.getMetadata().getPrometheusName())
                    .collect(Collectors.toSet());
            assertThat(names).contains(
                    "konnectivity_network_proxy_agent_dial_duration_seconds",
                    "konnectivity_network_proxy_agent_endpoint_dial_failure",
                    "konnectivity_network_proxy_agent_open_server_connections",
                    "konnectivity_network_proxy_agent_known_server_count",
                    "konnectivity_network_proxy_agent_open_endpoint_connections",
                    "konnectivity_network_proxy_agent_stream_packets",
                    "konnectivity_network_proxy_agent_stream_errors");
            MetricSnapshot packets = registry.scrape().stream()
                    .filter(m -> m.getMetadata().getName().equals("konnectivity_network_proxy_agent_stream_packets"))
                    .findFirst().orElseThrow();
            assertThat(packets.getDataPoints()).anySatisfy(p -> {
                assertThat(p.getLabels().get("segment")).isEqualTo("to_agent");
                assertThat(p.getLabels().get("packet_type")).isEqualTo("DIAL_REQ");
            });
        }
    }
}
