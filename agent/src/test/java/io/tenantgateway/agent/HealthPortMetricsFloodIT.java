package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A red-team shape issue 24's tests did not cover: 300 connections to the health port (100 each from 127.0.0.1–.3,
 * under the per-peer cap) each pipelining 200 {@code GET /metrics} and never reading. Rendered on the event loop the
 * probes share, their 4,800 renders (each scanning the process's open descriptors) held it for over 25 s: every
 * {@code /healthz} timed out at the manifests' 5 s probe timeout, which restarts the agent. {@code /metrics} now
 * renders on the HTTP loop's blocking threads (503 past their queue): the probes answer every time.
 *
 * <p>Each probe gets 10 s, twice the manifests' 5 s: room for a loaded CI machine, and still far less than the loop was
 * held for before (a probe behind the renders would miss it on any machine; slower machines held it longer).
 * {@code -Dtenantgateway.it.probeTimeoutMs=5000} holds the probes to the manifests' figure.
 */
@Timeout(90)
class HealthPortMetricsFloodIT extends AgentProcessTestBase {
    private static final int CONNECTIONS = 300;
    private static final int PIPELINED = 200;
    private static final int PROBES = 20;
    /** Twice the manifests' liveness and readiness {@code timeoutSeconds} (5), unless the system property says. */
    private static final Duration PROBE_TIMEOUT =
            Duration.ofMillis(Long.getLong("tenantgateway.it.probeTimeoutMs", 10_000));

    @Test
    void probesAnswerWhileManyConnectionsPipelineMetricsScrapesTheyNeverRead() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.removeIf(arg -> arg.startsWith("-v="));
        agent = AgentProcess.launch(args);
        int health = agent.healthPort();
        await().atMost(WAIT).until(() -> LoopbackHttp.status(health, "/readyz") == 200);

        byte[] scrapes = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(PIPELINED)
                .getBytes(StandardCharsets.US_ASCII);
        List<Socket> flood = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        try {
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket socket = new Socket();
                flood.add(socket);
                socket.setReceiveBufferSize(4096); // a reader that never reads
                socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0." + (1 + i / 100)), 0));
                socket.connect(new InetSocketAddress("127.0.0.1", health), (int) WAIT.toMillis());
                socket.getOutputStream().write(scrapes);
            }
            for (int i = 0; i < PROBES; i++) {
                String path = i % 2 == 0 ? "/healthz" : "/readyz";
                String outcome = LoopbackHttp.probe(health, path, PROBE_TIMEOUT);
                if (!outcome.equals("200")) {
                    failed.add(path + ": " + outcome);
                }
            }
        } finally {
            for (Socket socket : flood) {
                socket.close();
            }
        }
        assertThat(failed).as("probes that failed during the flood").isEmpty();
        await().atMost(WAIT).untilAsserted(() -> assertThat(LoopbackHttp.get(health, "/metrics")
                .body()).contains("tenant_gateway_health_server_connections"));
        assertThat(agent.process.isAlive()).isTrue();
        assertThat(agent.log.stream().filter(line -> line.matches("\\s+at .*")).toList())
                .as("no stack traces in the agent's log").isEmpty();
    }
}
