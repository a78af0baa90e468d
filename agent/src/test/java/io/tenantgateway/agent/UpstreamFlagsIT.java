package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.testing.TestPki;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * The built jar, as an operator runs it: an unknown flag, a missing or unreadable {@code --ca-cert} and a busy port
 * exit 2 with one line naming the flag (or file); upstream's {@code --alpn-proto=konnectivity} and a short
 * {@code --keepalive-time} connect, with one warning each for what is not implemented or risky.
 */
@Timeout(180)
class UpstreamFlagsIT extends AgentProcessTestBase {
    /** Flags that start the agent without a reachable server (it retries in the background). */
    private List<String> offlineArgs() {
        TestPki.Files pki = TestPki.create("flags-it").writeTo(dir.resolve("pki"));
        return new ArrayList<>(List.of("run", "--ca-cert=" + pki.caCert(), "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=1", "--health-server-host=127.0.0.1", "--health-server-port=0",
                "--admin-bind-address=127.0.0.1", "--admin-server-port=0", "--shutdown-grace=1s"));
    }

    @Test
    void typoExitsTwoWithTheNearestFlag() throws Exception {
        List<String> args = offlineArgs();
        args.add("--enable-lock-controler=true");
        JarProcess.Result result = JarProcess.run(args.toArray(String[]::new));
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err().strip()).isEqualTo("error: unknown flag: --enable-lock-controler (did you mean"
                + " --enable-lock-controller?)");
    }

    /**
     * A tunnel configuration {@code run} cannot use is rejected before the agent says it starts: the error is all
     * stderr holds (no "starting tenant-gateway … config={…}" line before it).
     */
    @Test
    void missingOrUnreadableCaCertExitsTwoWithOnlyTheErrorLine() throws Exception {
        List<String> args = offlineArgs();
        args.removeIf(arg -> arg.startsWith("--ca-cert="));
        JarProcess.Result missing = JarProcess.run(args.toArray(String[]::new));
        assertThat(missing.exitCode()).as(missing.err()).isEqualTo(2);
        assertThat(missing.err().strip()).isEqualTo("error: --ca-cert: not set (expected: the CA bundle that signs"
                + " the server certificate)");

        java.nio.file.Path absent = dir.resolve("no-such-ca.crt");
        args.add("--ca-cert=" + absent);
        JarProcess.Result unreadable = JarProcess.run(args.toArray(String[]::new));
        assertThat(unreadable.exitCode()).as(unreadable.err()).isEqualTo(2);
        assertThat(unreadable.err().strip()).isEqualTo("error: --ca-cert: " + absent + ": file not found");
    }

    /** The error line, and nothing that looks like a stack trace on stderr. */
    private static void assertPortInUse(JarProcess.Result result, String line) {
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        List<String> stderr = result.err().strip().lines().toList();
        assertThat(stderr).as(result.err()).last().isEqualTo(line);
        assertThat(stderr).as(result.err()).filteredOn(l -> l.contains("in use")).hasSize(1);
        assertThat(result.err()).doesNotContain("\tat ", "Exception", "internal error");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--health-server-port", "--admin-server-port"})
    void busyHealthOrAdminPortExitsTwoNamingTheFlag(String flag) throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            List<String> args = offlineArgs();
            args.add(flag + "=" + busy.getLocalPort());
            assertPortInUse(JarProcess.run(args.toArray(String[]::new)),
                    "error: " + flag + ": 127.0.0.1:" + busy.getLocalPort() + " is in use");
        }
    }

    @Test
    void busyWebhookPortExitsTwoNamingTheFlag() throws Exception {
        TestPki.Files webhookPki = TestPki.create("flags-it-webhook").writeTo(dir.resolve("webhook"));
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            List<String> args = offlineArgs();
            args.addAll(List.of("--webhook-tls-cert=" + webhookPki.serverCert(),
                    "--webhook-tls-key=" + webhookPki.serverKey(), "--webhook-listen=127.0.0.1:" + busy.getLocalPort(),
                    "--device-config-map=")); // no API here: HAMi's defaults, no ConfigMap watch
            assertPortInUse(JarProcess.run(args.toArray(String[]::new)),
                    "error: --webhook-listen: 127.0.0.1:" + busy.getLocalPort() + " is in use");
        }
    }

    @Test
    void alpnKonnectivityAndShortKeepaliveConnectWithOneWarningEach() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.addAll(List.of("--alpn-proto=konnectivity", "--keepalive-time=10s", "--warn-on-channel-limit",
                "-log-file-max-size=100"));
        agent = AgentProcess.start(args);

        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("offered konnectivity,h2")).isEqualTo("offered konnectivity,h2");
        }
        String log = String.join("\n", agent.log);
        // The effective configuration (logged by the agent and by the tunnel) offers h2 after konnectivity.
        assertThat(agent.lines("alpn-proto=konnectivity,h2")).as(log).isNotEmpty();
        assertThat(agent.lines("--keepalive-time=10s: below 30s")).as(log).hasSize(1)
                .allSatisfy(line -> assertThat(line).startsWith("W"));
        assertThat(agent.lines("--warn-on-channel-limit=true: accepted, not implemented yet")).as(log).hasSize(1)
                .allSatisfy(line -> assertThat(line).startsWith("W"));
        // klog's -log-file-max-size (single dash, as Go users write it) is implemented now: no warning.
        assertThat(agent.lines("log-file-max-size").stream().filter(line -> line.startsWith("W"))).as(log).isEmpty();
        assertThat(agent.log.stream().filter(line -> line.matches("W.* AgentCommand\\.java:\\d+] .*")))
                .as("the CLI's warnings: one per flag; log:%n%s", log).hasSize(2);
    }
}
