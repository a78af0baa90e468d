package io.tenantgateway.agent.ops;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.PartViews;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.server.AgentAuthenticator;
import io.tenantgateway.tunnel.server.FrontendMode;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tenant-gateway probe} against our Java konnectivity-server and a real agent (the {@code run} wiring with its
 * HAMi webhook): the whole path works, and each stage fails on purpose with its explanation and exit code.
 */
@Timeout(90)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProbeIT {
    /** The name kube-apiserver verifies for HAMi's webhook Service (on the test PKI's server certificate). */
    static final String WEBHOOK_NAME = "hami-scheduler.kube-system.svc";

    @TempDir
    static Path dir;

    private TunnelTestbed testbed;
    private Agent agent;
    private int webhookPort;
    private final List<AutoCloseable> extra = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = testbed.webhookArgs(0);
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.add("--device-config-map="); // no API here: the webhook with HAMi's defaults
        agent = new Agent(AgentCommand.parse(args.toArray(String[]::new)).toConfig(), Clock.systemUTC());
        agent.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> testbed.server.agentCount() == 1);
        webhookPort = PartViews.webhook(agent).orElseThrow().port();
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable closeable : extra) {
            closeable.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (testbed != null) {
            testbed.close();
        }
    }

    private String webhookTarget() {
        return "127.0.0.1:" + webhookPort;
    }

    /** {@code probe args…}, each stage given the tests' generous ceiling (its default, 10 s, is for operators). */
    private CliRun probe(String... args) {
        List<String> all = new ArrayList<>(List.of("probe", "--timeout=" + WAIT.toSeconds() + "s"));
        all.addAll(List.of(args));
        CliRun result = CliRun.of(all.toArray(String[]::new));
        System.out.println("$ tenant-gateway " + String.join(" ", all) + "\n" + result.out() + result.err());
        return result;
    }

    @Test
    void succeedsThroughServerAgentTlsAndWebhook() {
        CliRun result = probe("--uds", testbed.server.udsPath().toString(), "--target", webhookTarget(),
                "--tls-server-name", WEBHOOK_NAME, "--target-ca", testbed.files.caCert().toString(), "--webhook");

        assertThat(result.exitCode()).as(result.both()).isZero();
        assertThat(result.out()).containsPattern("PASS  server +[0-9.]+ ms  connected to unix:")
                .containsPattern("PASS  dial +[0-9.]+ ms  DIAL_RSP: tunnel open to 127.0.0.1:" + webhookPort)
                .containsPattern("PASS  tls +[0-9.]+ ms  TLSv1\\.[23] .*certificate matches " + WEBHOOK_NAME
                        + ", chain verified against --target-ca")
                .contains("names: DNS:localhost, DNS:hami-scheduler.kube-system.svc")
                .containsPattern("PASS  webhook +[0-9.]+ ms  HTTP 200: allowed, JSONPatch with [0-9]+ operation")
                .contains("\"path\":\"/spec/schedulerName\",\"value\":\"hami-scheduler\"")
                .contains("OK: every stage asked for passed");
        // The agent's webhook saw exactly this dry-run admission (no pod spec kept).
        assertThat(PartViews.webhook(agent).orElseThrow().recentAdmissions().snapshot())
                .anySatisfy(r -> assertThat(r.name()).isEqualTo("tenant-gateway-probe"));
    }

    @Test
    void jsonReportCarriesStagesChainAndPatch() throws Exception {
        CliRun result = probe("--uds", testbed.server.udsPath().toString(), "--target", webhookTarget(),
                "--tls-server-name", WEBHOOK_NAME, "--target-ca", testbed.files.caCert().toString(), "--webhook",
                "--json");

        assertThat(result.exitCode()).as(result.both()).isZero();
        JsonNode report = JsonMapper.builder().build().readTree(result.out());
        assertThat(report.get("ok").asBoolean()).isTrue();
        assertThat(report.get("stages")).extracting(s -> s.get("stage").asString() + "=" + s.get("outcome").asString())
                .containsExactly("server=pass", "dial=pass", "tls=pass", "webhook=pass");
        assertThat(report.get("stages").get(1).get("millis").asDouble()).isPositive();
        assertThat(report.at("/tls/nameMatches").asBoolean()).isTrue();
        assertThat(report.at("/tls/chain/0/names").toString()).contains("DNS:" + WEBHOOK_NAME);
        assertThat(report.at("/admission/allowed").asBoolean()).isTrue();
        assertThat(report.at("/admission/patch").toString()).contains("/spec/schedulerName");
    }

    @Test
    void serverDownIsAServerFailure() throws Exception {
        CliRun missing = probe("--uds", dir.resolve("no-server.socket").toString(), "--target", webhookTarget());
        assertThat(missing.exitCode()).as(missing.both()).isEqualTo(3);
        assertThat(missing.out()).contains("FAIL  server").contains("does not exist: konnectivity-server is not running")
                .contains("next: check the konnectivity-server container").contains("SKIP  dial")
                .contains("FAILED at server (exit 3)");

        CliRun refused = probe("--server", "127.0.0.1:" + TunnelTestbed.freePort(), "--plaintext", "--target",
                webhookTarget());
        assertThat(refused.exitCode()).as(refused.both()).isEqualTo(3);
        assertThat(refused.out()).contains("FAIL  server").contains("Connection refused")
                .contains("why:  nothing listens on 127.0.0.1:");
    }

    @Test
    void serverWithoutAgentsAnswersNoAgentAvailable() {
        TunnelServer empty = server("empty", FrontendMode.GRPC);
        CliRun result = probe("--uds", empty.udsPath().toString(), "--target", webhookTarget());

        assertThat(result.exitCode()).as(result.both()).isEqualTo(4);
        assertThat(result.out()).contains("PASS  server").contains("FAIL  dial").contains("No agent available")
                .contains("why:  the server answered the dial itself: no agent is connected to this server replica")
                .contains("next: on the tenant's nodes check the agent's /readyz (server-connected)")
                .contains("audience must be system:konnectivity-server").contains("FAILED at dial (exit 4)");
    }

    @Test
    void refusedTargetIsExplained() throws Exception {
        int port = TunnelTestbed.freePort();
        CliRun result = probe("--uds", testbed.server.udsPath().toString(), "--target", "127.0.0.1:" + port,
                "--tls-server-name", WEBHOOK_NAME);

        assertThat(result.exitCode()).as(result.both()).isEqualTo(4);
        assertThat(result.out()).contains("FAIL  dial").contains("dial tcp 127.0.0.1:" + port
                        + ": connect: connection refused")
                .contains("why:  an agent reached 127.0.0.1 but nothing listens on port " + port)
                .contains("kubectl get endpoints").contains("SKIP  tls");
    }

    @Test
    void tlsNameMismatchIsExplained() {
        CliRun result = probe("--uds", testbed.server.udsPath().toString(), "--target", webhookTarget(),
                "--tls-server-name", "hami-webhook.gpu-system.svc", "--target-ca", testbed.files.caCert().toString(),
                "--webhook");

        assertThat(result.exitCode()).as(result.both()).isEqualTo(5);
        assertThat(result.out()).contains("PASS  dial").contains("FAIL  tls")
                .contains("does not match the name 'hami-webhook.gpu-system.svc'")
                .contains("kube-apiserver would reject it")
                .contains("next: reissue the webhook certificate with the DNS name hami-webhook.gpu-system.svc")
                .contains("[0] CN=agent-it-server").contains("SKIP  webhook").contains("FAILED at tls (exit 5)");
    }

    @Test
    void webhookDenialIsExplained() throws Exception {
        Path pod = Files.writeString(dir.resolve("pinned-pod.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {name: pinned, namespace: team-a}
                spec:
                  nodeName: worker-7
                  containers:
                  - name: cuda
                    image: nvidia/cuda
                    resources: {limits: {nvidia.com/gpu: "1"}}
                """);
        CliRun result = probe("--uds", testbed.server.udsPath().toString(), "--target", webhookTarget(),
                "--tls-server-name", WEBHOOK_NAME, "--target-ca", testbed.files.caCert().toString(), "--webhook",
                "--pod", pod.toString());

        assertThat(result.exitCode()).as(result.both()).isEqualTo(7);
        assertThat(result.out()).contains("PASS  tls").contains("FAIL  webhook")
                .contains("HTTP 200: refused, code 403: pod has node assigned")
                .contains("why:  the webhook denied the pod: pod has node assigned; the tunnel and TLS work")
                .contains("next: the pod sets spec.nodeName").contains("FAILED at webhook (exit 7)");
    }

    @Test
    void grpcOverTcpWithMutualTls() throws Exception {
        TunnelServer tcpServer = server("tcp", FrontendMode.GRPC);
        connectAgent(tcpServer);
        String frontend = "127.0.0.1:" + tcpServer.frontendAddress().getPort();

        CliRun result = probe("--server", frontend, "--server-ca", testbed.files.caCert().toString(), "--client-cert",
                testbed.files.clientCert().toString(), "--client-key", testbed.files.clientKey().toString(),
                "--target", webhookTarget(), "--tls-server-name", WEBHOOK_NAME, "--webhook");
        assertThat(result.exitCode()).as(result.both()).isZero();
        assertThat(result.out()).containsPattern("PASS  server +[0-9.]+ ms  connected to " + frontend
                + " \\(TLSv1\\.3, server certificate verified, client certificate presented\\)")
                .contains("DIAL_RSP: tunnel open to " + webhookTarget() + " (includes the gRPC connection setup)");

        CliRun noClientCert = probe("--server", frontend, "--server-ca", testbed.files.caCert().toString(), "--target",
                webhookTarget());
        assertThat(noClientCert.exitCode()).as(noClientCert.both()).isEqualTo(3);
        assertThat(noClientCert.out()).contains("FAIL  server")
                .contains("why:  the server requires a client certificate and the probe presented none")
                .contains("next: pass --client-cert/--client-key");

        CliRun wrongMode = probe("--server", frontend, "--server-ca", testbed.files.caCert().toString(),
                "--client-cert", testbed.files.clientCert().toString(), "--client-key",
                testbed.files.clientKey().toString(), "--mode", "http-connect", "--target", webhookTarget());
        assertThat(wrongMode.exitCode()).as(wrongMode.both()).isEqualTo(4);
        assertThat(wrongMode.out()).contains("FAIL  dial").contains("it runs --mode grpc");

        TestPki.Files other = TestPki.create("elsewhere").writeTo(dir.resolve("elsewhere-pki"));
        CliRun wrongCa = probe("--server", frontend, "--server-ca", other.caCert().toString(), "--target",
                webhookTarget());
        assertThat(wrongCa.exitCode()).as(wrongCa.both()).isEqualTo(3);
        assertThat(wrongCa.out()).contains("FAIL  server").contains("is not signed by a trusted CA")
                .contains("next: --server-ca must be the CA of the server's frontend certificate");
    }

    @Test
    void httpConnectModeWorksToo() throws Exception {
        TunnelServer connectServer = server("connect", FrontendMode.HTTP_CONNECT);
        connectAgent(connectServer);

        CliRun result = probe("--mode", "http-connect", "--uds", connectServer.udsPath().toString(), "--target",
                webhookTarget(), "--tls-server-name", WEBHOOK_NAME, "--webhook");
        assertThat(result.exitCode()).as(result.both()).isZero();
        assertThat(result.out()).containsPattern("PASS  dial +[0-9.]+ ms  HTTP 200 Connection established")
                .contains("chain NOT verified (no --target-ca)").contains("HTTP 200: allowed");

        CliRun wrongMode = probe("--uds", connectServer.udsPath().toString(), "--target", webhookTarget());
        assertThat(wrongMode.exitCode()).as(wrongMode.both()).isEqualTo(3);
        assertThat(wrongMode.out()).contains("FAIL  server").contains("it runs --mode http-connect (probe with"
                + " --mode http-connect)");

        CliRun refused = probe("--mode", "http-connect", "--uds", connectServer.udsPath().toString(), "--target",
                "127.0.0.1:" + TunnelTestbed.freePort());
        assertThat(refused.exitCode()).as(refused.both()).isEqualTo(4);
        assertThat(refused.out()).contains("FAIL  dial").contains("HTTP 502 Bad Gateway: dial tcp 127.0.0.1:")
                .contains("why:  an agent reached 127.0.0.1 but nothing listens");
    }

    @Test
    void badFlagsExitTwoWithOneLine() {
        CliRun both = probe("--uds", "/x.sock", "--server", "127.0.0.1:1", "--target", "127.0.0.1:443");
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err().strip()).isEqualTo("error: --uds/--server: both given (expected: exactly one: the"
                + " server's Unix socket or its TCP frontend)");

        CliRun webhookWithoutName = probe("--uds", "/x.sock", "--target", "127.0.0.1:443", "--webhook");
        assertThat(webhookWithoutName.exitCode()).isEqualTo(2);
        assertThat(webhookWithoutName.err()).contains("--webhook: without --tls-server-name");

        CliRun badTarget = probe("--uds", "/x.sock", "--target", "10.96.0.10");
        assertThat(badTarget.exitCode()).isEqualTo(2);
        assertThat(badTarget.err()).contains("--target: '10.96.0.10' (expected: HOST:PORT");
    }

    /** A server with a Unix-socket frontend and a TCP frontend that requires client certificates (mTLS). */
    private TunnelServer server(String id, FrontendMode mode) {
        TunnelServer server = new TunnelServer(TunnelServerConfig.builder(testbed.pki.serverMaterial()).serverId(id)
                .serverCount(1).agentAddress(new InetSocketAddress("127.0.0.1", 0))
                .agentAuthenticator(AgentAuthenticator.staticTokens(Set.of(TunnelTestbed.TOKEN)))
                .mode(mode).udsPath(dir.resolve(id + ".socket"))
                .frontendAddress(new InetSocketAddress("127.0.0.1", 0)).frontendTls(testbed.pki.serverMaterial())
                .eventLoopThreads(1).build());
        server.start();
        extra.add(server);
        return server;
    }

    /** A tunnel-only agent (no webhook of its own) connected to {@code server}. */
    private void connectAgent(TunnelServer server) {
        TunnelConfig config = TunnelConfig.builder().proxyServerHost("127.0.0.1")
                .proxyServerPort(server.agentAddress().getPort()).caCert(testbed.files.caCert())
                .serviceAccountTokenPath(testbed.tokenFile).agentId("agent-of-" + server.config().serverId()).build();
        TunnelClientSet agentOfServer = TunnelClientSet.builder(config).registry(new PrometheusRegistry()).build();
        agentOfServer.start();
        extra.add(0, agentOfServer);
        await().atMost(Duration.ofSeconds(30)).until(() -> server.agentCount() == 1);
    }
}
