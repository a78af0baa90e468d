package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TransferHandler;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import io.tenantgateway.tunnel.testing.TunnelTestBase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** 10,000 short tunnels: open file descriptors and every tunnel registry return to where they started. */
@Timeout(180)
class LeakIT extends TunnelTestBase {
    private static final int TUNNELS = 10_000;
    private static final int BATCH = 100;

    @Test
    void tenThousandShortTunnelsLeaveNothingBehind() throws Exception {
        TunnelServer server = harness.startServer(TunnelHarness.serverConfig("leak")
                .udsPath(TunnelHarness.socketPath(dir)).build());
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server).build());
        await().atMost(WAIT).until(agent::isReady);
        TargetServer echo = harness.track(TargetServer.echo());
        ProxyClient client = harness.track(ProxyClient.builder().unixSocket(server.udsPath()).connections(2)
                .build());

        runBatches(client, echo, 2); // warm up pools, resolvers and lazily opened files
        awaitIdle(agent, server, echo);
        long baseline = openFileDescriptors();

        long start = System.nanoTime();
        runBatches(client, echo, TUNNELS / BATCH);
        long millis = (System.nanoTime() - start) / 1_000_000;

        awaitIdle(agent, server, echo);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(openFileDescriptors()).isLessThanOrEqualTo(baseline));
        assertThat(echo.accepted()).isEqualTo(TUNNELS + 2 * BATCH);
        System.out.printf("leak: %d tunnels in %d ms; open fds %d (baseline %d)%n", TUNNELS, millis,
                openFileDescriptors(), baseline);
    }

    private static void runBatches(ProxyClient client, TargetServer echo, int batches) throws Exception {
        for (int b = 0; b < batches; b++) {
            List<TransferHandler> transfers = new ArrayList<>(BATCH);
            List<CompletableFuture<Channel>> dials = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                TransferHandler transfer = new TransferHandler(b * BATCH + i, 1, 1);
                transfers.add(transfer);
                dials.add(client.dial(echo.hostPort(), transfer));
            }
            for (int i = 0; i < BATCH; i++) {
                Channel channel = dials.get(i).get(30, TimeUnit.SECONDS);
                transfers.get(i).done().get(30, TimeUnit.SECONDS);
                channel.close();
            }
            for (CompletableFuture<Channel> dial : dials) {
                dial.get().closeFuture().await(30, TimeUnit.SECONDS);
            }
        }
    }

    private static void awaitIdle(TunnelClientSet agent, TunnelServer server, TargetServer echo) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(agent.openTunnels()).isZero();
            assertThat(agent.snapshot().tunnels()).isEmpty();
            assertThat(server.tunnelCount()).isZero();
            assertThat(server.pendingDialCount()).isZero();
            assertThat(echo.openConnections()).isZero();
        });
    }

    private static long openFileDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
