package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.main.Main;
import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.policy.DialPolicy;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
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
        return AgentCommand.parse(args.toArray(String[]::new));
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

        assertThat(command.logOptions().verbosity()).isEqualTo(8);
        assertThat(config.tunnel().orElseThrow().proxyServerHost()).isEqualTo("127.0.0.1");
        assertThat(config.tunnel().orElseThrow().proxyServerPort()).isEqualTo(8132);
        assertThat(config.servers().adminServerPort()).isEqualTo(8133);
        assertThat(config.servers().healthServerPort()).isEqualTo(8134);
        assertThat(config.tunnel().orElseThrow().serviceAccountTokenPath()).isEqualTo(token);
        assertThat(config.tunnel().orElseThrow().caCert()).isEqualTo(pki.caCert());
        assertThat(config.webhook()).isEmpty();
        assertThat(config.devices()).isEmpty();
        assertThat(config.allocation()).isEmpty();
        assertThat(config.needsKubernetes()).isFalse();
    }

    @Test
    void upstreamDefaultsMatchKonnectivityAgent() {
        AgentConfig config = parse(List.of("--ca-cert=" + pki.caCert())).toConfig();
        assertThat(config.tunnel().orElseThrow().proxyServerPort()).isEqualTo(8091);
        assertThat(config.servers().healthServerPort()).isEqualTo(8093);
        assertThat(config.servers().adminServerPort()).isEqualTo(8094);
        assertThat(config.servers().adminBindAddress()).isEqualTo("127.0.0.1");
        assertThat(config.tunnel().orElseThrow().syncInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.tunnel().orElseThrow().syncIntervalCap()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.tunnel().orElseThrow().probeInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.tunnel().orElseThrow().keepaliveTime()).isEqualTo(Duration.ofHours(1));
        assertThat(config.tunnel().orElseThrow().xfrChannelSize()).isEqualTo(150);
        assertThat(config.tunnel().orElseThrow().leaseNamespace()).isEqualTo("kube-system");
        assertThat(config.tunnel().orElseThrow().leaseLabelSelector()).isEqualTo("k8s-app=konnectivity-server");
        assertThat(config.shutdownGrace()).isEqualTo(Duration.ofSeconds(25));
        assertThat(config.tunnel().orElseThrow().agentId()).isNotBlank();
        // Ours (upstream waits for a stuck target for good): the flag's default is the tunnel's.
        assertThat(config.tunnel().orElseThrow().stuckTargetTimeout())
                .isEqualTo(TunnelConfig.DEFAULT_STUCK_TARGET_TIMEOUT);
    }

    @Test
    void theDefaultDialPolicyKeepsTheAdminPortLoopbackAndLinkLocalClosed() {
        DialPolicy policy = parse(List.of("--ca-cert=" + pki.caCert())).toConfig().tunnel().orElseThrow().dialPolicy();
        assertThat(policy.defaults()).isEqualTo(DialPolicy.Defaults.agent(8094));
        assertThat(policy.beforeResolution("127.0.0.1", 8094).rule()).isEqualTo("agent admin port");
        assertThat(policy.beforeResolution("127.0.0.1", 8093).rule()).isEqualTo("default: loopback");
        assertThat(policy.beforeResolution("localhost", 80).rule()).isEqualTo("default: loopback");
        assertThat(policy.beforeResolution("169.254.169.254", 80).rule()).isEqualTo("default: link-local");
        assertThat(policy.beforeResolution("fe80::1", 80).rule()).isEqualTo("default: link-local");
        assertThat(policy.beforeResolution("10.96.0.10", 443).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);
        assertThat(policy.describe()).startsWith("denied: agent admin port 8094 on this host (loopback, unspecified,"
                + " localhost); default: loopback");

        // Kamaji's admin port; loopback opened, the admin port still closed, everything else as before.
        DialPolicy loopback = parse(List.of("--ca-cert=" + pki.caCert(), "--admin-server-port=8133",
                "--dial-allow=127.0.0.0/8")).toConfig().tunnel().orElseThrow().dialPolicy();
        assertThat(loopback.beforeResolution("127.0.0.1", 8093).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);
        assertThat(loopback.beforeResolution("127.0.0.1", 8133).rule()).isEqualTo("agent admin port");
        assertThat(loopback.beforeResolution("10.0.0.1", 22).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);

        // The one-line override: every target, as upstream, but still not the admin port, here on its bind address.
        DialPolicy upstream = parse(List.of("--ca-cert=" + pki.caCert(), "--admin-bind-address=10.0.0.5",
                "--dial-allow=0.0.0.0/0,::/0")).toConfig().tunnel().orElseThrow().dialPolicy();
        assertThat(upstream.beforeResolution("169.254.169.254", 80).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);
        assertThat(upstream.beforeResolution("127.0.0.1", 8093).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);
        assertThat(upstream.beforeResolution("10.0.0.5", 8094).rule()).isEqualTo("agent admin port");
        assertThat(upstream.beforeResolution("10.0.0.5", 9443).verdict()).isEqualTo(DialPolicy.Verdict.ALLOW);
    }

    @Test
    void unknownFlagIsAUsageErrorNamingTheNearestFlag() {
        Run typo = run("--enable-lock-controler=true");
        assertThat(typo.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(typo.err()).isEqualTo("error: unknown flag: --enable-lock-controler (did you mean"
                + " --enable-lock-controller?)");

        Run singleDash = run("-enable-lock-controler");
        assertThat(singleDash.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(singleDash.err()).isEqualTo("error: unknown flag: -enable-lock-controler (did you mean"
                + " --enable-lock-controller?)");

        Run far = run("--some-future-flag=x");
        assertThat(far.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(far.err()).isEqualTo("error: unknown flag: --some-future-flag");

        // doctor parses run's flags with AgentCommand.parse: the same error, before any check runs.
        StringWriter err = new StringWriter();
        List<String> doctor = new ArrayList<>(List.of("doctor"));
        doctor.addAll(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        doctor.add("--keepalive-tme=1h");
        int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err, true),
                doctor.toArray(String[]::new));
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString().strip()).isEqualTo("error: unknown flag: --keepalive-tme (did you mean"
                + " --keepalive-time?)");
        assertThatThrownBy(() -> AgentCommand.parse("--sync-intervall=2s"))
                .isInstanceOf(CommandLine.UnmatchedArgumentException.class);

        for (Run r : List.of(typo, singleDash, far)) {
            assertThat(r.err().lines()).hasSize(1);
        }
    }

    /** One row per flag of the upstream agent (v0.30.0 --help, HEAD options.go, klog): a sensible non-default value. */
    private record Upstream(List<String> args, String warning) {
        static Upstream implemented(String... args) {
            return new Upstream(List.of(args), null);
        }

        static Upstream notImplemented(String arg) {
            return new Upstream(List.of(arg), arg + ": accepted, not implemented yet (no effect)");
        }
    }

    private List<Upstream> upstreamFlags() throws Exception {
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
        return List.of(
                Upstream.implemented("--proxy-server-host=konnectivity.example.com"),
                Upstream.implemented("--proxy-server-port=8132"),
                Upstream.implemented("--ca-cert=" + pki.caCert()),
                Upstream.implemented("--agent-cert=" + pki.serverCert(), "--agent-key=" + pki.serverKey()),
                Upstream.implemented("--alpn-proto=konnectivity"),
                Upstream.implemented("--service-account-token-path=" + token),
                Upstream.implemented("--agent-id=agent-7"),
                Upstream.implemented("--agent-identifiers=host=node-1&ipv4=10.0.0.7&default-route=true"),
                Upstream.implemented("--sync-interval=2s"),
                Upstream.implemented("--sync-interval-cap=30s"),
                Upstream.implemented("--probe-interval=5s"),
                Upstream.implemented("--sync-forever"),
                Upstream.implemented("--keepalive-time=2m"),
                Upstream.implemented("--xfr-channel-size=300"),
                Upstream.implemented("--count-server-leases=true"),
                Upstream.implemented("--lease-namespace=konnectivity"),
                Upstream.implemented("--lease-label-selector=app=konnectivity"),
                Upstream.implemented("--health-server-host=127.0.0.1"),
                Upstream.implemented("--health-server-port=8134"),
                Upstream.implemented("--admin-bind-address=0.0.0.0"),
                Upstream.implemented("--admin-server-port=8133"),
                Upstream.implemented("--kubeconfig=" + kubeconfig),
                Upstream.implemented("-v=4"),
                Upstream.implemented("--v=2"),
                Upstream.implemented("--logtostderr=true"),
                Upstream.implemented("--alsologtostderr=true"),
                Upstream.implemented("--enable-profiling=true"),
                Upstream.implemented("--enable-profiling=true", "--enable-contention-profiling=true"),
                Upstream.notImplemented("--warn-on-channel-limit=true"),
                Upstream.notImplemented("--server-count-source=max"),
                Upstream.notImplemented("--kube-api-content-type=application/json"),
                Upstream.notImplemented("--lease-label=app=konnectivity"),
                Upstream.implemented("--logtostderr=false", "--log-file=/var/log/konnectivity-agent.log"),
                new Upstream(List.of("--logtostderr=false"), "--logtostderr=false without --log-file: logging to"
                        + " stderr (klog would write files in the temporary directory)"),
                new Upstream(List.of("--log-file=/var/log/konnectivity-agent.log"), "--log-file=/var/log/"
                        + "konnectivity-agent.log: no effect while --logtostderr=true (as klog); add"
                        + " --logtostderr=false to write it"),
                Upstream.implemented("--log-file-max-size=100"),
                Upstream.notImplemented("--log-dir=/var/log"),
                Upstream.implemented("--stderrthreshold=INFO"),
                Upstream.implemented("--skip-headers=true"),
                Upstream.notImplemented("--skip-log-headers=true"),
                Upstream.notImplemented("--add-dir-header=true"),
                Upstream.notImplemented("--one-output=true"),
                Upstream.notImplemented("--log-backtrace-at=client.go:210"),
                Upstream.implemented("--vmodule=client*=5,server=3"),
                Upstream.notImplemented("--log-flush-frequency=10s"));
    }

    @Test
    void everyUpstreamFlagIsAcceptedAndTheUnimplementedOnesWarnOnce() throws Exception {
        for (Upstream flag : upstreamFlags()) {
            List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
            args.addAll(flag.args());
            AgentCommand command = AgentCommand.parse(args.toArray(String[]::new));
            assertThat(command.toConfig()).as("%s", flag.args()).isNotNull();
            assertThat(command.logOptions()).as("%s", flag.args()).isNotNull();
            if (flag.warning() == null) {
                assertThat(command.warnings()).as("%s", flag.args()).isEmpty();
            } else {
                assertThat(command.warnings()).as("%s", flag.args()).containsExactly(flag.warning());
            }
        }
        // Kamaji's own list (-v=8 --logtostderr=true ...) warns about nothing.
        assertThat(AgentCommand.parse(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134).toArray(String[]::new))
                .warnings()).isEmpty();
    }

    @Test
    void profilingFlagsReachTheConfigAndContentionAloneWarns() {
        List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        AgentConfig off = AgentCommand.parse(args.toArray(String[]::new)).toConfig();
        assertThat(off.profiling()).isFalse();
        assertThat(off.contentionProfiling()).isFalse();

        args.add("--enable-profiling");
        args.add("--enable-contention-profiling");
        AgentConfig on = AgentCommand.parse(args.toArray(String[]::new)).toConfig();
        assertThat(on.profiling()).isTrue();
        assertThat(on.contentionProfiling()).isTrue();

        args.remove("--enable-profiling");
        assertThat(AgentCommand.parse(args.toArray(String[]::new)).warnings())
                .containsExactly("--enable-contention-profiling=true: no effect without --enable-profiling");
    }

    @Test
    void goFlagFormsAreAccepted() {
        AgentCommand command = AgentCommand.parse("-proxy-server-host=kas.example.com", "-proxy-server-port", "8132",
                "--agent-id", "a-1", "-v=8", "-health-server-port=8134", "--sync-forever", "--count-server-leases=false",
                "-warn-on-channel-limit", "--ca-cert=" + pki.caCert());
        AgentConfig config = command.toConfig();
        assertThat(config.tunnel().orElseThrow().proxyServerHost()).isEqualTo("kas.example.com");
        assertThat(config.tunnel().orElseThrow().proxyServerPort()).isEqualTo(8132);
        assertThat(config.tunnel().orElseThrow().agentId()).isEqualTo("a-1");
        assertThat(config.servers().healthServerPort()).isEqualTo(8134);
        assertThat(config.tunnel().orElseThrow().syncForever()).isTrue();
        assertThat(config.tunnel().orElseThrow().countServerLeases()).isFalse();
        assertThat(command.logOptions().verbosity()).isEqualTo(8);
        assertThat(command.warnings()).containsExactly("--warn-on-channel-limit=true: accepted, not implemented yet"
                + " (no effect)");
        assertThat(AgentCommand.parse("-v", "3").logOptions().verbosity()).isEqualTo(3);
    }

    @Test
    void aRepeatedFlagOverridesTheEarlierOneAsKamajisExtraArgsDo() {
        List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        args.addAll(List.of("--admin-server-port=9133", "-v=2", "--alpn-proto=konnectivity"));
        AgentCommand command = AgentCommand.parse(args.toArray(String[]::new));
        assertThat(command.toConfig().servers().adminServerPort()).isEqualTo(9133);
        assertThat(command.logOptions().verbosity()).isEqualTo(2);

        Run run = run("--admin-server-port=9133", "--device-source=cuda", "--node-name=n");
        assertThat(run.err()).as("parsed past the repeated flag").isEqualTo("error: --device-source: 'cuda'"
                + " (expected one of: mock, nvidia-smi, none)");
    }

    @Test
    void alpnProtoGetsH2AndShortKeepaliveWarns() {
        AgentConfig alpn = config("--alpn-proto=konnectivity");
        assertThat(alpn.tunnel().orElseThrow().alpnProtos()).containsExactly("konnectivity", "h2");

        List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        args.add("--keepalive-time=10s");
        AgentCommand command = AgentCommand.parse(args.toArray(String[]::new));
        assertThat(command.toConfig().tunnel().orElseThrow().keepaliveTime()).isEqualTo(Duration.ofSeconds(10));
        assertThat(command.warnings()).containsExactly("--keepalive-time=10s: below 30s; konnectivity-server answers"
                + " pings more often than every 30s with GOAWAY too_many_pings and closes the connection");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "--server-count-source=min | --server-count-source: min (expected: default or max)",
        "--stderrthreshold=LOUD | --stderrthreshold: LOUD (expected: INFO, WARNING, ERROR, FATAL or 0-3)",
        "--log-file-max-size=-1 | --log-file-max-size: -1 (expected: >= 0, in MB)",
        "--vmodule=client | --vmodule: client (expected: comma-separated PATTERN=N, e.g. client*=5,server=3)",
        "--log-backtrace-at=client.go | --log-backtrace-at: client.go (expected: FILE:LINE, e.g. client.go:210)",
        "--log-flush-frequency=often | --log-flush-frequency: often (expected: a duration such as 5m, 90s, 1h30m,"
            + " 250ms)",
        "--stuck-target-timeout=100ms | --stuck-target-timeout: 100ms (expected: >= 1s, or 0 to never close a tunnel"
            + " for it)",
        "--stuck-target-timeout=soon | --stuck-target-timeout: soon (expected: a duration such as 5m, 90s, 1h30m,"
            + " 250ms)"})
    void malformedValuesOfAcceptedFlagsAreRejected(String flag, String message) {
        assertThatThrownBy(() -> config(flag)).hasMessage(message);
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
        assertThat(config.allocation()).hasValueSatisfying(a -> assertThat(a.mode()).isEqualTo(AllocationMode.OBSERVE));
        assertThat(config.devicePlugin()).isEmpty();
        assertThat(config.tunnel().orElseThrow().dialPolicy().allowsAll()).isFalse();
        assertThat(config.needsKubernetes()).isTrue();
    }

    @Test
    void aNodeNameDiscoveredLaterReachesEveryPartWithoutReadingTheFlagsAgain() {
        // As run does under Kamaji: the flags are checked with the placeholder, which the agent's config never shows.
        AgentConfig checked = config("--node-name=" + AgentCommand.PENDING_NODE_NAME, "--device-source=nvidia-smi",
                "--device-plugin=true", "--device-plugin-dir=/tmp/kubelet-plugins");
        assertThat(checked.nodeName()).isEmpty();
        assertThat(checked.describe()).containsEntry("node-name", "<unset>");

        // Each part applies the name when it starts (Part.needsNodeName): the configs take it without the flags.
        assertThat(checked.devices().orElseThrow().withNodeName("gpu-7").nodeName()).isEqualTo("gpu-7");
        assertThat(checked.allocation().orElseThrow().withNodeName("gpu-7").nodeName()).isEqualTo("gpu-7");
        assertThat(checked.devicePlugin().orElseThrow().allocator().withNodeName("gpu-7").nodeName())
                .isEqualTo("gpu-7");
        assertThat(checked.devices().orElseThrow().withNodeName("gpu-7").withNodeName(AgentCommand.PENDING_NODE_NAME))
                .isEqualTo(checked.devices().orElseThrow());
    }

    @Test
    void theDevicePluginCompletesAllocationsWhenOn() {
        AgentConfig config = config("--node-name=gpu-1", "--device-source=nvidia-smi", "--device-plugin=true",
                "--device-plugin-dir=/tmp/kubelet-plugins");

        assertThat(config.devicePlugin()).hasValueSatisfying(d -> {
            assertThat(d.plugin().socket()).hasToString("/tmp/kubelet-plugins/nvidia-gpu.sock");
            assertThat(d.plugin().resourceName()).isEqualTo("nvidia.com/gpu");
            assertThat(d.plugin().preferredAllocation()).isTrue();
            assertThat(d.allocator().nodeName()).isEqualTo("gpu-1");
            assertThat(d.allocator().hamiCore().hookPath()).isEqualTo("/usr/local");
        });
        assertThat(config.allocation()).hasValueSatisfying(a -> assertThat(a.mode())
                .isEqualTo(AllocationMode.DEVICE_PLUGIN));
        assertThat(config.describe()).containsEntry("device-plugin",
                "/tmp/kubelet-plugins/nvidia-gpu.sock resource=nvidia.com/gpu");
        assertThat(config("--node-name=gpu-1", "--device-source=nvidia-smi", "--device-plugin=false").devicePlugin())
                .isEmpty();
    }

    /**
     * --device-plugin is spelled as every boolean flag (--device-plugin, =true, =false) while its first spelling,
     * on|off, keeps working on the command line and in a --config file: argument lists and files written for it still
     * start.
     */
    @ParameterizedTest
    @CsvSource({"--device-plugin,true", "--device-plugin=true,true", "--device-plugin=TRUE,true",
        "--device-plugin=on,true", "--device-plugin=On,true", "--device-plugin=false,false",
        "--device-plugin=off,false", "--device-plugin=OFF,false"})
    void devicePluginTakesTrueFalseAndTheOldOnOff(String flag, boolean on) {
        AgentConfig config = config("--node-name=gpu-1", "--device-source=nvidia-smi", flag);
        assertThat(config.devicePlugin().isPresent()).as(flag).isEqualTo(on);
        assertThat(config.allocation().orElseThrow().mode()).as(flag)
                .isEqualTo(on ? AllocationMode.DEVICE_PLUGIN : AllocationMode.OBSERVE);
    }

    @ParameterizedTest
    @CsvSource({"'on',true", "'off',false", "'true',true", "'false',false", "true,true", "false,false"})
    void devicePluginInAConfigFileTakesBothSpellings(String value, boolean on) throws Exception {
        Path file = Files.writeString(dir.resolve("run.yaml"), "device-plugin: " + value + "\n");
        AgentConfig config = config("--config=" + file, "--node-name=gpu-1", "--device-source=nvidia-smi");
        assertThat(config.devicePlugin().isPresent()).as(value).isEqualTo(on);
    }

    @Test
    void devicePluginAloneBeforeAnotherFlagIsTrue() {
        // arity 0..1, as the other booleans: the next argument is a flag, not the value.
        AgentConfig config = config("--node-name=gpu-1", "--device-plugin", "--device-source=nvidia-smi");
        assertThat(config.devicePlugin()).isPresent();
        assertThat(config("--node-name=gpu-1", "--device-source=nvidia-smi").devicePlugin()).isEmpty();
    }

    @Test
    void theDeviceConfigGivesSplitCountScalingAndTheResourceName() throws Exception {
        Path deviceConfig = Files.writeString(dir.resolve("device-config.yaml"), """
                nvidia:
                  resourceCountName: example.com/vgpu
                  deviceSplitCount: 4
                  deviceMemoryScaling: 1.5
                  deviceCoreScaling: 2
                """);
        AgentConfig config = config("--node-name=gpu-1", "--device-source=nvidia-smi", "--device-plugin=true",
                "--device-plugin-dir=/tmp/kubelet-plugins", "--device-config=" + deviceConfig);

        assertThat(config.devices()).hasValueSatisfying(d -> {
            assertThat(d.splitCount()).isEqualTo(4);
            assertThat(d.memoryScaling()).isEqualTo(1.5);
            assertThat(d.coreScaling()).isEqualTo(2.0);
        });
        assertThat(config.devicePlugin()).hasValueSatisfying(d -> {
            assertThat(d.plugin().resourceName()).isEqualTo("example.com/vgpu");
            assertThat(d.plugin().socket()).hasToString("/tmp/kubelet-plugins/nvidia-vgpu.sock");
            assertThat(d.allocator().hamiCore().deviceMemoryScaling()).isEqualTo(1.5);
        });
        // The flag wins over the file.
        assertThat(config("--node-name=gpu-1", "--device-source=nvidia-smi", "--device-config=" + deviceConfig,
                "--device-split-count=7").devices().orElseThrow().splitCount()).isEqualTo(7);
    }

    @Test
    void devicePluginFlagsAreChecked() {
        assertThatThrownBy(() -> config("--node-name=gpu-1", "--device-plugin=true"))
                .hasMessage("--device-plugin: true with --device-source=none (expected: --device-source=nvidia-smi or"
                        + " mock: the plugin lists the GPUs the agent discovers)");
        assertThatThrownBy(() -> config("--node-name=gpu-1", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--device-plugin=yes")).hasMessage("--device-plugin: yes (expected: true or false)");
        assertThatThrownBy(() -> config("--node-name=gpu-1", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--device-plugin=true", "--device-plugin-dir=/" + "d".repeat(100)))
                .hasMessageStartingWith("--device-plugin-dir: /ddd").hasMessageContaining("at most 107 bytes");
        assertThatThrownBy(() -> config("--node-name=gpu-1", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--allocation-mode=complete")).hasMessage("--allocation-mode: complete (expected: observe or"
                + " device-plugin; the agent completes allocations in its device plugin's Allocate now, as HAMi's"
                + " plugin does: --device-plugin=true)");
        assertThatThrownBy(() -> config("--node-name=gpu-1", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--allocation-mode=device-plugin")).hasMessage("--allocation-mode: device-plugin without"
                + " --device-plugin=true (expected: observe, or --device-plugin=true)");
    }

    @Test
    void webhookListenTakesEveryHostPortFormAndBadValuesNameTheFlag() {
        String[] tls = {"--webhook-tls-cert=" + pki.serverCert(), "--webhook-tls-key=" + pki.serverKey()};
        for (String[] form : new String[][] {{"9443", "0.0.0.0", "9443"}, {":8443", "0.0.0.0", "8443"},
            {"[::1]:0", "::1", "0"}, {"127.0.0.1:9444", "127.0.0.1", "9444"}}) {
            AgentConfig config = config(tls[0], tls[1], "--webhook-listen=" + form[0]);
            assertThat(config.webhook().orElseThrow().config().host()).as(form[0]).isEqualTo(form[1]);
            assertThat(config.webhook().orElseThrow().config().port()).as(form[0]).isEqualTo(Integer.parseInt(form[2]));
        }
        assertThatThrownBy(() -> config(tls[0], tls[1], "--webhook-listen=::1:9443"))
                .isInstanceOf(ConfigException.class).hasMessage("--webhook-listen: ::1:9443 (expected: HOST:PORT,"
                        + " [IPv6]:PORT, :PORT or PORT, e.g. 0.0.0.0:9443)");
        assertThatThrownBy(() -> config(tls[0], tls[1], "--upstream-ca=" + pki.caCert()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--upstream-ca: given without --upstream (expected: both or neither)");
    }

    @Test
    void theRulesBetweenPartsAreConfigErrors() {
        assertThatThrownBy(() -> config("--device-plugin=true")).isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> config("--enable-lock-controller")).isInstanceOf(ConfigException.class)
                .hasMessage("--enable-lock-controller: no node name (expected: --node-name or env NODE_NAME)");
        assertThatThrownBy(() -> config("--device-source=mock", "--mock-gpus=L4-24GB"))
                .isInstanceOf(ConfigException.class).hasMessage("--device-source: mock without a node name (expected:"
                        + " --node-name or env NODE_NAME)");
        // Devices turn the lock controller on unless it is turned off.
        assertThat(config("--node-name=n", "--device-source=mock", "--mock-gpus=L4-24GB",
                "--enable-lock-controller=false").allocation()).isEmpty();
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
        assertThat(config.tunnel().orElseThrow().proxyServerPort()).isEqualTo(8132);
        assertThat(config.nodeName()).contains("from-flag");
        assertThat(config.devices()).isPresent();
        assertThat(config.tunnel().orElseThrow().dialPolicy().allowsAll()).isFalse();
    }

    @Test
    void configFileWithUnknownKeyIsRejected() throws Exception {
        Path file = Files.writeString(dir.resolve("bad.yaml"), "proxy-sever-host: typo\n");
        assertThatThrownBy(() -> config("--config", file.toString()))
                .hasMessage("--config: " + file + ": unknown key 'proxy-sever-host' (did you mean proxy-server-host?)");
        Path far = Files.writeString(dir.resolve("far.yaml"), "colour: blue\n");
        assertThatThrownBy(() -> config("--config", far.toString()))
                .hasMessage("--config: " + far + ": unknown key 'colour' (expected one of the flag names without"
                        + " dashes, e.g. proxy-server-host; see --help)");
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

        Run garbage = run("--keepalive-time=soon");
        assertThat(garbage.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(garbage.err()).isEqualTo("error: --keepalive-time: soon (expected: a duration such as 5m, 90s,"
                + " 1h30m, 250ms)");

        for (Run r : List.of(source, missingCert, cidr, keepalive, garbage)) {
            assertThat(r.err().lines()).hasSize(1);
        }
    }

    @Test
    void selfManagedCertificatesTakeTheSecretTheServiceAndGoDurations() {
        AgentConfig config = config("--webhook-tls-secret=tg/webhook-tls", "--webhook-tls-self-managed",
                "--webhook-service=tg/hami-webhook", "--webhook-tls-validity=2160h", "--webhook-tls-renew-before=48h",
                "--manage-webhook-config");
        var certificates = config.webhook().orElseThrow().certificates().orElseThrow();
        assertThat(certificates.secret()).isEqualTo("tg/webhook-tls");
        assertThat(certificates.dnsNames()).containsExactly("hami-webhook", "hami-webhook.tg", "hami-webhook.tg.svc",
                "hami-webhook.tg.svc.cluster.local");
        assertThat(certificates.validity()).isEqualTo(Duration.ofDays(90));
        assertThat(certificates.renewBefore()).isEqualTo(Duration.ofHours(48));
        assertThat(certificates.caValidity()).isEqualTo(Duration.ofDays(3650));
        assertThat(certificates.caOverlap()).isEqualTo(Duration.ofHours(1));
        assertThat(config.apiUses(false)).contains(KubernetesPermissions.Use.WEBHOOK_TLS_SECRET,
                KubernetesPermissions.Use.WEBHOOK_TLS_SELF_MANAGED);
        assertThat(config.describe().get("webhook-tls-self-managed")).isEqualTo("secret=tg/webhook-tls"
                + " service=tg/hami-webhook validity=2160h0m0s renew-before=48h0m0s ca-validity=87600h0m0s"
                + " ca-overlap=1h0m0s");

        // Defaults: the manifests' Service; off unless asked for.
        assertThat(config("--webhook-tls-secret=kube-system/x", "--webhook-tls-self-managed=true").webhook()
                .orElseThrow().certificates().orElseThrow().service()).isEqualTo("kube-system/tenant-gateway-webhook");
        AgentConfig readOnly = config("--webhook-tls-secret=kube-system/x");
        assertThat(readOnly.webhook().orElseThrow().certificates()).isEmpty();
        assertThat(readOnly.apiUses(false)).doesNotContain(KubernetesPermissions.Use.WEBHOOK_TLS_SELF_MANAGED);
        assertThat(readOnly.describe().get("webhook-tls-self-managed")).isEqualTo("off");

        List<String> args = new ArrayList<>(kamajiArgs(pki.caCert(), token, 8132, 8133, 8134));
        args.addAll(List.of("--webhook-tls-secret=kube-system/x", "--webhook-tls-self-managed"));
        assertThat(parse(args).warnings()).containsExactly("--webhook-tls-self-managed=true without"
                + " --manage-webhook-config: write the Secret's ca.crt into the webhook configuration's caBundle"
                + " yourself, and again after each CA rotation");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "--webhook-tls-self-managed | --webhook-tls-self-managed: true without --webhook-tls-secret (expected:"
            + " --webhook-tls-secret=NAMESPACE/NAME, the Secret the agents keep the certificates in, e.g."
            + " kube-system/tenant-gateway-webhook-tls)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-service=svc | --webhook-service:"
            + " svc (expected: NAMESPACE/NAME, e.g. kube-system/tenant-gateway-webhook)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-service=ns/a.b | --webhook-service:"
            + " ns/a.b (expected: NAMESPACE/NAME in lower-case letters, digits and '-')",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-tls-renew-before=9000h |"
            + " --webhook-tls-renew-before: 9000h0m0s (expected: < --webhook-tls-validity 8760h0m0s)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-tls-validity=0s |"
            + " --webhook-tls-validity: 0s (expected: > 0)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-ca-validity=8760h |"
            + " --webhook-ca-validity: 8760h0m0s (expected: >= 2 x --webhook-tls-validity 8760h0m0s; the CA is"
            + " replaced once less than one certificate validity is left)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--webhook-tls-renew-before=soon |"
            + " --webhook-tls-renew-before: soon (expected: a duration such as 5m, 90s, 1h30m, 250ms)",
        "--webhook-tls-secret=x,--webhook-tls-self-managed | --webhook-tls-secret: x (expected: NAMESPACE/NAME, e.g."
            + " kube-system/tenant-gateway-webhook-tls)",
        "--webhook-tls-secret=kube-system/x,--webhook-tls-self-managed,--enable-webhook=false |"
            + " --webhook-tls-self-managed: true with the webhook off (expected: --enable-webhook=true, or drop"
            + " --webhook-tls-self-managed)"})
    void badSelfManagedCertificateFlagsNameTheFlag(String flags, String message) {
        assertThatThrownBy(() -> config(flags.split(","))).hasMessage(message);
    }

    @Test
    void badSelfManagedFlagsExitTwo() {
        Run renew = run("--webhook-tls-secret=kube-system/x", "--webhook-tls-self-managed",
                "--webhook-tls-renew-before=0s");
        assertThat(renew.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(renew.err()).isEqualTo("error: --webhook-tls-renew-before: 0s (expected: > 0)");
    }

    // --- the node role: --tunnel=false ---------------------------------------------------------------------------

    /** The node role's arguments as the chart renders them (no konnectivity-server flags). */
    private List<String> nodeRole(String... extra) {
        List<String> args = new ArrayList<>(List.of("--tunnel=false", "--node-name=worker-1",
                "--health-server-port=8134", "--admin-server-port=8133", "--device-source=mock",
                "--mock-gpus=L4-24GB:2", "--device-plugin=true", "--device-plugin-dir=" + dir.resolve("dp")));
        args.addAll(List.of(extra));
        return args;
    }

    private Run runWithout(String... args) {
        List<String> all = new ArrayList<>(List.of("run"));
        all.addAll(List.of(args));
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err, true),
                all.toArray(String[]::new));
        return new Run(code, err.toString().strip());
    }

    @Test
    void theNodeRoleRunsItsPartsWithoutATunnelOrItsFlags() {
        AgentConfig config = parse(nodeRole("--agent-id=node-agent-1", "--enable-profiling")).toConfig();

        assertThat(config.tunnel()).isEmpty();
        assertThat(config.agentId()).isEqualTo("node-agent-1");
        assertThat(config.devices()).isPresent();
        assertThat(config.devicePlugin()).isPresent();
        assertThat(config.allocation()).hasValueSatisfying(a -> assertThat(a.mode())
                .isEqualTo(AllocationMode.DEVICE_PLUGIN));
        assertThat(config.webhook()).isEmpty();
        assertThat(config.servers().healthServerPort()).isEqualTo(8134);
        assertThat(config.profiling()).isTrue();
        // The effective configuration (start line, /debug/config) says so, and has none of the tunnel's settings.
        assertThat(config.describe()).containsEntry("tunnel", "off").containsEntry("agent-id", "node-agent-1")
                .doesNotContainKeys("proxy-server-host", "ca-cert", "dial-policy", "sync-interval");
        assertThat(Parts.enabled(config)).extracting(part -> part.plan().name())
                .containsExactly("devices", "device-plugin", "lock-controller", "monitor");
        assertThat(config.apiUses(false)).contains(KubernetesPermissions.Use.DEVICE_REGISTRATION,
                KubernetesPermissions.Use.DEVICE_PLUGIN, KubernetesPermissions.Use.LOCK_CONTROLLER)
                .doesNotContain(KubernetesPermissions.Use.SERVER_LEASES, KubernetesPermissions.Use.WEBHOOK_QUOTA);

        // On by default, and as every boolean: --tunnel, --tunnel=true.
        for (String on : List.of("--tunnel", "--tunnel=true", "--tunnel=TRUE")) {
            AgentConfig tunnel = config(on);
            assertThat(tunnel.tunnel()).as(on).isPresent();
            assertThat(tunnel.describe()).as(on).containsEntry("tunnel", "on").containsKey("proxy-server-host");
            assertThat(tunnel.agentId()).isEqualTo(tunnel.tunnel().orElseThrow().agentId());
        }
        assertThat(config().describe()).containsEntry("tunnel", "on");
    }

    /**
     * Every flag of the tunnel's mixin is either the tunnel's alone (refused with --tunnel=false) or shared with the
     * node role: a new flag must be put in one of the two lists. Each of the tunnel's is refused naming it, even with
     * its default value, on the command line and in a --config file.
     */
    @Test
    void everyTunnelFlagGivenWithTheTunnelOffIsAConfigErrorNamingIt() throws Exception {
        CommandLine.Model.CommandSpec mixin = new CommandLine(new AgentCommand()).getCommandSpec().mixins()
                .get("tunnel");
        List<String> names = mixin.options().stream().map(CommandLine.Model.OptionSpec::longestName).toList();
        List<String> classified = new ArrayList<>(io.tenantgateway.agent.cli.TunnelFlags.TUNNEL_ONLY);
        classified.addAll(io.tenantgateway.agent.cli.TunnelFlags.SHARED);
        assertThat(classified).containsExactlyInAnyOrderElementsOf(names);

        for (String flag : io.tenantgateway.agent.cli.TunnelFlags.TUNNEL_ONLY) {
            String declared = mixin.findOption(flag).defaultValue();
            String value = declared == null || declared.isEmpty() ? "x" : declared;
            assertThatThrownBy(() -> parse(nodeRole(flag + "=" + value)).toConfig()).as(flag)
                    .isInstanceOf(ConfigException.class).hasMessage(flag + ": " + value + " (expected: not set with"
                            + " --tunnel=false: the tunnel is off; drop the flag, or drop --tunnel=false to run the"
                            + " tunnel)");
        }
        Path file = Files.writeString(dir.resolve("node.yaml"), "proxy-server-host: konnectivity.example.com\n");
        assertThatThrownBy(() -> parse(nodeRole("--config=" + file)).toConfig())
                .hasMessageStartingWith("--proxy-server-host: konnectivity.example.com (expected: not set with");
        // Kamaji's fixed list with --tunnel=false appended (as extraArgs would): its first tunnel flag is named.
        Run kamaji = run("--tunnel=false", "--node-name=n", "--device-source=mock", "--mock-gpus=L4-24GB");
        assertThat(kamaji.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(kamaji.err()).isEqualTo("error: --proxy-server-host: 127.0.0.1 (expected: not set with"
                + " --tunnel=false: the tunnel is off; drop the flag, or drop --tunnel=false to run the tunnel)");
    }

    @Test
    void aNodeRoleWithNothingToDoExitsTwoWithOneLine() {
        String expected = "error: --tunnel: false with no part on (expected: at least one part without the tunnel:"
                + " --device-source=mock|nvidia-smi (device registration, with the lock controller, the monitor"
                + " and --device-plugin=true), --enable-lock-controller=true, or the webhook)";
        for (Run idle : List.of(runWithout("--tunnel=false"), runWithout("--tunnel=false", "--health-server-port=0",
                "--node-name=n", "--enable-lock-controller=false"))) {
            assertThat(idle.code()).isEqualTo(ExitCodes.USAGE);
            assertThat(idle.err()).isEqualTo(expected);
        }
        // One part is enough: the lock controller alone (observe mode).
        AgentConfig locks = AgentCommand.parse("--tunnel=false", "--node-name=n", "--enable-lock-controller=true")
                .toConfig();
        assertThat(locks.tunnel()).isEmpty();
        assertThat(locks.allocation()).hasValueSatisfying(a -> assertThat(a.mode()).isEqualTo(AllocationMode.OBSERVE));
    }
}
