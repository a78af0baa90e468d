package io.tenantgateway.tools.bench;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.common.config.ConfigException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tenant-gateway bench}: measures the tunnel (and the webhook path through it) against a direct baseline in
 * the same run. See {@code agent/README.md} ("bench") and {@code BENCHMARKS.md}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Measure the tunnel against direct loopback connections, in the same run.",
            "Bulk and parallel throughput, dial latency, memory per idle tunnel, isolation from a stalled tunnel, and"
                + " webhook admissions through the tunnel.",
            "Everything runs in this process on 127.0.0.1 (the scale scenario's agent in a child JVM), unless"
                + " --server names an external konnectivity-server."})
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--scenario", split = ",", paramLabel = "NAME",
            description = "Scenarios to run (repeatable or comma-separated): bulk, parallel, dial, scale, isolation,"
                    + " admission, footprint. Default: all.")
    List<String> scenarios;

    @Option(names = "--quick", description = "Small sizes and one measured run each: a smoke run in well under 30 s.")
    boolean quick;

    @Option(names = "--json", description = "Print the report as JSON (figures, byte counts, CPU) instead of a table.")
    boolean json;

    @Option(names = "--warmups", paramLabel = "N", description = "Discarded runs per mode before measuring."
            + " Default: 1.")
    Integer warmups;

    @Option(names = "--repeats", paramLabel = "N", description = "Measured runs per mode; the median is reported."
            + " Default: 3 (1 with --quick).")
    Integer repeats;

    @Option(names = "--server", paramLabel = "HOST:PORT",
            description = "Use this konnectivity-server's agent port instead of an in-process server. Needs --ca-cert"
                    + " and a frontend (--frontend-uds or --frontend).")
    String server;

    @Option(names = "--ca-cert", paramLabel = "FILE", description = "With --server: CA of its agent-port certificate.")
    Path caCert;

    @Option(names = "--agent-cert", paramLabel = "FILE",
            description = "With --server: agent client certificate (mTLS).")
    Path agentCert;

    @Option(names = "--agent-key", paramLabel = "FILE", description = "With --server: key of --agent-cert.")
    Path agentKey;

    @Option(names = "--service-account-token-path", paramLabel = "FILE",
            description = "With --server: bearer token file (token auth).")
    Path tokenPath;

    @Option(names = "--agent-identifiers", paramLabel = "QUERY", defaultValue = "",
            description = "With --server: the bench agent's identifiers, e.g. ipv4=127.0.0.1 (for destHost routing).")
    String agentIdentifiers;

    @Option(names = "--frontend-uds", paramLabel = "PATH",
            description = "With --server: its ProxyService Unix socket (--uds-name).")
    Path frontendUds;

    @Option(names = "--frontend", paramLabel = "HOST:PORT",
            description = "With --server: its ProxyService TCP frontend (mTLS with the --frontend-* files).")
    String frontend;

    @Option(names = "--frontend-cert", paramLabel = "FILE", description = "Client certificate for --frontend.")
    Path frontendCert;

    @Option(names = "--frontend-key", paramLabel = "FILE", description = "Key of --frontend-cert.")
    Path frontendKey;

    @Option(names = "--frontend-ca", paramLabel = "FILE", description = "CA of the --frontend serving certificate.")
    Path frontendCa;

    @Option(names = "--launcher", paramLabel = "FILE",
            description = "footprint: the launcher that starts the agent, as the image does. Default: bin/proxy-agent"
                    + " of this checkout (or image).")
    Path launcher;

    @Option(names = "--footprint-java-opts", paramLabel = "OPTIONS", defaultValue = "", hidden = true,
            description = "Tuning experiments: JVM options the footprint scenario adds to the agent's (JAVA_OPTS).")
    String footprintJavaOpts;

    @Option(names = "--agent-max-data-size", paramLabel = "BYTES", defaultValue = "0", hidden = true,
            description = "Tuning experiments: the agent's largest DATA (target read size). Default: the agent's.")
    int agentMaxDataSize;

    @Override
    public Integer call() throws Exception {
        BenchConfig config = toConfig();
        BenchReport report = new Bench(config, Clock.systemUTC()).run();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? ReportFormat.json(report) + System.lineSeparator() : ReportFormat.table(report));
        out.flush();
        return ExitCodes.OK;
    }

    /** Validates the flags into a {@link BenchConfig}. */
    BenchConfig toConfig() {
        Set<Scenario> selected = EnumSet.allOf(Scenario.class);
        if (scenarios != null && !scenarios.isEmpty()) {
            selected = EnumSet.noneOf(Scenario.class);
            for (String name : scenarios) {
                selected.add(Scenario.parse(name));
            }
        }
        BenchSizes sizes = quick ? BenchSizes.quick() : BenchSizes.full();
        if (warmups != null || repeats != null) {
            sizes = sizes.withRuns(warmups != null ? warmups : sizes.warmups(),
                    repeats != null ? repeats : sizes.repeats());
        }
        ExternalServer external = null;
        if (server != null) {
            HostPortFlag agentPort = HostPortFlag.parse("--server", server);
            HostPortFlag frontendPort = frontend == null ? null : HostPortFlag.parse("--frontend", frontend);
            external = new ExternalServer(agentPort.host(), agentPort.port(), caCert, agentCert, agentKey, tokenPath,
                    agentIdentifiers, frontendUds, frontendPort == null ? null : frontendPort.host(),
                    frontendPort == null ? 0 : frontendPort.port(), frontendCert, frontendKey, frontendCa);
        } else if (caCert != null || agentCert != null || tokenPath != null || frontendUds != null || frontend != null) {
            throw new ConfigException("--ca-cert/--agent-cert/--service-account-token-path/--frontend*",
                    "set without --server", "--server HOST:PORT, or none of them for the in-process server");
        }
        Path footprintLauncher = launcher != null ? launcher : FootprintScenario.defaultLauncher();
        if (selected.contains(Scenario.FOOTPRINT) && !java.nio.file.Files.isExecutable(footprintLauncher)) {
            throw new ConfigException("--launcher", footprintLauncher,
                    "an executable bin/proxy-agent; the footprint scenario starts the agent through it");
        }
        return new BenchConfig(selected, quick, sizes, external, agentMaxDataSize, footprintLauncher,
                footprintJavaOpts);
    }

    /** {@code host:port}, IPv6 hosts in brackets. */
    record HostPortFlag(String host, int port) {
        static HostPortFlag parse(String flag, String value) {
            int colon = value.lastIndexOf(':');
            if (colon <= 0 || colon == value.length() - 1) {
                throw new ConfigException(flag, value, "HOST:PORT");
            }
            String host = value.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(value.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException(flag, value, "HOST:PORT with a numeric port", e);
            }
            if (port < 1 || port > 65535) {
                throw new ConfigException(flag, "port " + port, "1..65535");
            }
            return new HostPortFlag(host, port);
        }
    }
}
