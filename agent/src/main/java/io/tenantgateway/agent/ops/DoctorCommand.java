package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.doctor.DoctorCheck;

import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.cli.Durations;
import io.tenantgateway.agent.cli.GoFlags;
import io.tenantgateway.common.net.HostPort;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code tenant-gateway doctor}: the node-side checklist. Takes exactly the flags of {@code run} (so the DaemonSet's
 * argument list can be pasted, {@code --config FILE} included; an unknown flag exits 2, as in {@code run}) and
 * checks, without starting the agent, that each thing the agent will need works, with a fix for each failure.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Check this node's agent setup, without starting the agent, with a fix for each failure.",
            "Files (CA, client cert/key, token), DNS, TCP, TLS and the Connect handshake with konnectivity-server,"
                + " Kubernetes permissions, the GPU device source.",
            "Takes every flag of 'tenant-gateway run' (see its --help), plus the options below."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {" 0:no check failed (warnings allowed)", " 1:a check failed (each has a fix)",
            " 2:unknown or malformed flags"})
public final class DoctorCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--json", description = "Print the checklist as JSON. Default: a table.")
    boolean json;

    @Option(names = "--check-timeout", defaultValue = "5s", paramLabel = "DURATION",
            description = "Limit of each network check. Default: ${DEFAULT-VALUE}.")
    String checkTimeout;

    /** Everything else: the flags of {@code run}, parsed by {@link AgentCommand} itself. */
    @Unmatched
    List<String> runFlags = new ArrayList<>();

    @Override
    public Integer call() throws InterruptedException {
        AgentCommand flags;
        try {
            flags = AgentCommand.parse(runFlags.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
            // The run flags' own command line printed nowhere: this command's handler prints GoFlags' one line and
            // exits 2 (picocli hands it the ParameterException, the cause, with this command's streams). The line is
            // made here, where doctor's own flags can be offered as the nearest known one too (--check-timout).
            String message = GoFlags.message(e, List.of(spec));
            throw new CommandLine.ExecutionException(spec.commandLine(), message,
                    new CommandLine.ParameterException(spec.commandLine(), message, e));
        }
        var timeout = Durations.parse("--check-timeout", checkTimeout);
        PrintWriter out = spec.commandLine().getOut();
        List<DoctorCheck> checks;
        String heading;
        try {
            AgentConfig config = flags.resolveConfig();
            heading = "doctor: agent " + config.agentId() + " on node " + config.nodeName().orElse("<unset>")
                    + config.tunnel().map(tunnel -> ", server " + new HostPort(tunnel.proxyServerHost(),
                            tunnel.proxyServerPort())).orElse(", tunnel off");
            try (Doctor doctor = new Doctor(config, Clock.systemUTC(), timeout)) {
                checks = new ArrayList<>(doctor.run());
            }
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            // The agent would exit 2 with this message at start: that is the first thing to fix.
            heading = "doctor: the agent would not start with these flags";
            checks = new ArrayList<>(List.of(DoctorCheck.fail("config", e.getMessage(),
                    "fix the flag named in the message (tenant-gateway run --help lists them)")));
        }
        List<String> warnings = flagWarnings(flags);
        if (!warnings.isEmpty()) {
            checks.add(0, DoctorCheck.warn("flags", String.join("; ", warnings),
                    "run starts and logs the same warnings; drop the flags or change the values to silence them"));
        }
        DoctorReport report = new DoctorReport(heading, checks);
        if (json) {
            report.printJson(out);
        } else {
            report.printText(out);
        }
        return report.exitCode();
    }

    /** {@link AgentCommand#warnings()}, or none when a value is too malformed to judge (the config check says so). */
    private static List<String> flagWarnings(AgentCommand flags) {
        try {
            return flags.warnings();
        } catch (IllegalArgumentException e) {
            return List.of();
        }
    }
}
