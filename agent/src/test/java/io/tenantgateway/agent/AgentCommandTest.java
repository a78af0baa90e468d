package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.certs.testing.TestPki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Flag parsing and validation of {@code run}, without starting anything. */
class AgentCommandTest {
    @TempDir
    Path dir;

    private TestPki.Files pki;
    private Path token;

    @BeforeEach
    void files() throws Exception {
        pki = TestPki.create("run").writeTo(dir);
        token = Files.writeString(dir.resolve("token"), "secret-token");
    }

    /** Kamaji's agent arguments (shared/spec/kamaji.md), with loopback host and test files. */
    static List<String> kamajiArgs(Path ca, Path token, int serverPort, int adminPort, int healthPort) {
        return List.of("-v=8", "--logtostderr=true", "--ca-cert=" + ca, "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=" + serverPort, "--admin-server-port=" + adminPort,
                "--health-server-port=" + healthPort, "--service-account-token-path=" + token);
    }

    private AgentCommand parse(List<String> args) {
        AgentCommand command = new AgentCommand();
        CommandLine commandLine = new CommandLine(command);
        ConfigFileDefaults.install(commandLine, args.toArray(String[]::new));
        commandLine.parseArgs(args.toArray(String[]::new));
        return command;
    }

    private AgentConfig config(String... args) {
        List<String> all = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        all.addAll(List.of(args));
        return parse(all).toConfig();
    }

    @Test
    void kamajiArgumentListParsesIntoAPureKonnectivityAgent() {
        AgentCommand command = parse(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        AgentConfig config = command.toConfig();

        assertThat(command.verbosity).isEqualTo(8);
        assertThat(config.tunnel().proxyServerHost()).isEqualTo("127.0.0.1");
        assertThat(config.tunnel().proxyServerPort()).isEqualTo(8132);
        assertThat(config.tunnel().adminServerPort()).isEqualTo(8133);
        assertThat(config.tunnel().healthServerPort()).isEqualTo(8134);
        assertThat(config.tunnel().serviceAccountTokenPath()).isEqualTo(token);
        assertThat(config.tunnel().caCert()).isEqualTo(pki.caCert());
        assertThat(config.webhook()).isEmpty();
        assertThat(config.devices()).isEmpty();
        assertThat(config.allocation()).isEmpty();
        assertThat(config.needsKubernetes()).isFalse();
    }

    @Test
    void upstreamDefaultsMatchKonnectivityAgent() {
        AgentConfig config = parse(List.of("--ca-cert=" + pki.caCert())).toConfig();
        assertThat(config.tunnel().proxyServerPort()).isEqualTo(8091);
        assertThat(config.tunnel().healthServerPort()).isEqualTo(8093);
        assertThat(config.tunnel().adminServerPort()).isEqualTo(8094);
        assertThat(config.tunnel().adminBindAddress()).isEqualTo("127.0.0.1");
        assertThat(config.tunnel().syncInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.tunnel().syncIntervalCap()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.tunnel().probeInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.tunnel().keepaliveTime()).isEqualTo(Duration.ofHours(1));
        assertThat(config.tunnel().xfrChannelSize()).isEqualTo(150);
        assertThat(config.tunnel().leaseNamespace()).isEqualTo("kube-system");
        assertThat(config.tunnel().leaseLabelSelector()).isEqualTo("k8s-app=konnectivity-server");
        assertThat(config.shutdownGrace()).isEqualTo(Duration.ofSeconds(25));
        assertThat(config.tunnel().agentId()).isNotBlank();
    }

    @Test
    void unknownUpstreamFlagsAreCollectedNotFatal() {
        List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        args.add("--stderrthreshold=2");
        args.add("--some-future-flag=x");
        AgentCommand command = parse(args);
        assertThat(command.unmatched).containsExactly("--stderrthreshold=2", "--some-future-flag=x");
        assertThat(command.toConfig().tunnel().proxyServerPort()).isEqualTo(8132);
    }

    @Test
    void hamiPartsTurnOnWithTheirFlags() {
        AgentConfig config = config("--node-name=worker-a", "--device-source=mock", "--mock-gpus=A100-80GB",
                "--webhook-tls-cert=" + pki.serverCert(), "--webhook-tls-key=" + pki.serverKey(),
                "--webhook-listen=127.0.0.1:0", "--dial-allow=10.96.0.0/12,*.svc,port:443");

        assertThat(config.webhook()).hasValueSatisfying(w -> {
            assertThat(w.config().host()).isEqualTo("127.0.0.1");
            assertThat(w.config().port()).isZero();
        });
        assertThat(config.devices()).hasValueSatisfying(d -> assertThat(d.nodeName()).isEqualTo("worker-a"));
        assertThat(config.allocation()).hasValueSatisfying(a -> assertThat(a.mode()).isEqualTo(AllocationMode.COMPLETE));
        assertThat(config.tunnel().dialPolicy().allowsAll()).isFalse();
        assertThat(config.needsKubernetes()).isTrue();
    }

    @Test
    void nvidiaSmiDefaultsToObservingAllocations() {
        AgentConfig config = config("--node-name=gpu-1", "--device-source=nvidia-smi");
        assertThat(config.allocation()).hasValueSatisfying(a -> assertThat(a.mode()).isEqualTo(AllocationMode.OBSERVE));
    }

    @Test
    void configFileSuppliesDefaultsAndFlagsWin() throws Exception {
        Path file = Files.writeString(dir.resolve("agent.yaml"), """
                proxy-server-port: 9999
                node-name: from-file
                device-source: mock
                mock-gpus: L4-24GB:2
                dial-deny: [169.254.0.0/16, "*.internal"]
                """);
        AgentConfig config = config("--config=" + file, "--node-name=from-flag");
        // kamajiArgs sets --proxy-server-port=8132 on the command line: the flag wins over the file.
        assertThat(config.tunnel().proxyServerPort()).isEqualTo(8132);
        assertThat(config.nodeName()).contains("from-flag");
        assertThat(config.devices()).isPresent();
        assertThat(config.tunnel().dialPolicy().allowsAll()).isFalse();
    }

    @Test
    void configFileWithUnknownKeyIsRejected() throws Exception {
        Path file = Files.writeString(dir.resolve("bad.yaml"), "proxy-sever-host: typo\n");
        assertThatThrownBy(() -> config("--config", file.toString()))
                .hasMessage("--config: " + file + ": unknown key 'proxy-sever-host' (expected one of the flag names"
                        + " without dashes, e.g. proxy-server-host; see --help)");
    }

    private record Run(int code, String err) {
    }

    private Run run(String... extra) {
        List<String> args = new ArrayList<>(List.of("run"));
        args.addAll(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        args.addAll(List.of(extra));
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err, true), args.toArray(String[]::new));
        return new Run(code, err.toString().strip());
    }

    @Test
    void badConfigExitsTwoWithOneLine() {
        Run source = run("--device-source=cuda", "--node-name=n");
        assertThat(source.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(source.err()).isEqualTo("error: --device-source: 'cuda' (expected one of: mock, nvidia-smi, none)");

        Run missingCert = run("--webhook-tls-cert=" + dir.resolve("nope.crt"), "--webhook-tls-key=" + pki.serverKey());
        assertThat(missingCert.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(missingCert.err()).isEqualTo("error: --webhook-tls-cert: " + dir.resolve("nope.crt")
                + ": file not found");

        Run cidr = run("--dial-allow=10.0.0.0/33");
        assertThat(cidr.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(cidr.err()).startsWith("error: --dial-allow: CIDR: \"10.0.0.0/33\" (expected: a prefix length 0..32");

        Run keepalive = run("--keepalive-time=0s");
        assertThat(keepalive.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(keepalive.err()).isEqualTo("error: --keepalive-time: 0s (expected: > 0)");

        for (Run r : List.of(source, missingCert, cidr, keepalive)) {
            assertThat(r.err().lines()).hasSize(1);
        }
    }
}
