package io.tenantgateway.tools.bench;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.tools.Main;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * {@code bench --server ...} against a konnectivity-server the bench did not start (here our Java one, mTLS on the
 * agent port, a Unix-socket frontend): the bench's agent (in-process, and the scale scenario's child JVM) connects
 * with the given files and the transfers go through that server.
 */
@Timeout(180)
class ExternalServerBenchIT {
    @TempDir
    Path dir;

    @Test
    void benchesThroughAnExternalServer() throws Exception {
        TestPki pki = TestPki.create("bench-external");
        TestPki.Files files = pki.writeTo(dir.resolve("pki"));
        Path socket = dir.resolve("konnectivity-server.socket");
        try (TunnelServer server = new TunnelServer(TunnelServerConfig.builder(pki.serverMaterial())
                .serverId("external").agentAddress(new InetSocketAddress("127.0.0.1", 0))
                .agentClientAuth(ClientAuthMode.REQUIRE).udsPath(socket).eventLoopThreads(1).build())) {
            server.start();
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = Main.run(new PrintWriter(out), new PrintWriter(err), "bench", "--quick", "--json",
                    "--scenario", "bulk,scale", "--warmups", "0", "--repeats", "1",
                    "--server", "127.0.0.1:" + server.agentAddress().getPort(), "--ca-cert", files.caCert().toString(),
                    "--agent-cert", files.clientCert().toString(), "--agent-key", files.clientKey().toString(),
                    "--frontend-uds", socket.toString());
            assertThat(exit).as("exit code; stderr:%n%s", err).isZero();

            JsonNode report = BenchJson.parse(out.toString());
            assertThat(report.path("server").asString()).startsWith("external 127.0.0.1:")
                    .contains("unix:" + socket).contains("mTLS");
            assertThat(BenchJson.scenarioNames(report)).containsExactly("bulk", "scale");
            report.path("scenarios").forEach(BenchJson::assertComplete);
            BenchJson.assertBytesMatch(BenchJson.scenario(report, "bulk"), "tunnel");
            BenchJson.assertBytesMatch(BenchJson.scenario(report, "bulk"), "direct");
            assertThat(BenchJson.scenario(report, "scale").path("details").path("steps").path("300")
                    .path("agentTunnels").asInt()).isEqualTo(300);
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(server.agentCount()).as("the bench's agents are gone").isZero();
                assertThat(server.tunnelCount()).isZero();
            });
        }
    }
}
