package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Readiness is honest from the first byte the health port answers: {@code run}, started through the launcher as the
 * image starts it, with no konnectivity-server reachable, is polled from process start as fast as the client can
 * go and never says 200 (for at least 5 s, and until the port has said 503 at least once, however long the JVM takes
 * to open it on a busy machine); once a server appears it becomes ready (the time is printed: about a second here,
 * with a 500 ms retry cap), and {@code /ready} answers as {@code /readyz} does.
 */
@Timeout(120)
class ReadinessFromStartIT extends AgentProcessTestBase {
    @Test
    void neverReadyBeforeAServerIsConnected() throws Exception {
        int serverPort = TunnelTestbed.freePort();
        int healthPort = TunnelTestbed.freePort();
        testbed = new TunnelTestbed(dir, serverPort, false);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.removeIf(arg -> arg.startsWith("--health-server-port="));
        // A short error backoff so the agent dials again soon after the server appears (default: 1 s growing to 10 s).
        args.addAll(List.of("--health-server-host=127.0.0.1", "--health-server-port=" + healthPort,
                "--sync-interval=200ms", "--sync-interval-cap=500ms"));

        agent = AgentProcess.launch(args);
        long started = System.nanoTime();
        TreeMap<Integer, Integer> answers = new TreeMap<>();
        // At least 5 s of polls, and on until the health port has opened and said 503 (the JVM's start is not timed).
        while (System.nanoTime() - started < Duration.ofSeconds(5).toNanos() || !answers.containsKey(503)) {
            assertThat(System.nanoTime() - started).as("the health port did not open and say 503 within %s (answers"
                    + " so far %s)", WAIT, answers).isLessThan(WAIT.toNanos());
            int status = LoopbackHttp.status(healthPort, "/readyz");
            answers.merge(status, 1, Integer::sum);
            assertThat(status).as("/readyz %.0f ms after start, with no server (answers so far %s)",
                    (System.nanoTime() - started) / 1e6, answers).isNotEqualTo(200);
            assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
        }
        System.out.printf("readyz answers with no server, %.1f s from start (status=count, -1 = port not open yet):"
                + " %s%n", (System.nanoTime() - started) / 1e9, answers);

        HttpResponse<String> notReady = LoopbackHttp.get(healthPort, "/readyz?verbose");
        assertThat(notReady.body()).contains("[-]server-connected failed: no servers connected\n")
                .doesNotContain("failed: server-connected failed");
        HttpResponse<String> aliasNotReady = LoopbackHttp.get(healthPort, "/ready?verbose");
        assertThat(aliasNotReady.statusCode()).isEqualTo(notReady.statusCode());
        assertThat(aliasNotReady.body()).isEqualTo(notReady.body());

        testbed.startServer();
        long appeared = System.nanoTime();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> LoopbackHttp.status(healthPort, "/readyz") == 200);
        System.out.printf("ready %.0f ms after the server appeared%n", (System.nanoTime() - appeared) / 1e6);
        HttpResponse<String> ready = LoopbackHttp.get(healthPort, "/readyz");
        HttpResponse<String> alias = LoopbackHttp.get(healthPort, "/ready");
        assertThat(alias.statusCode()).isEqualTo(ready.statusCode()).isEqualTo(200);
        assertThat(alias.body()).isEqualTo(ready.body()).isEqualTo("ok");
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("through the tunnel")).isEqualTo("through the tunnel");
        }
    }

}
