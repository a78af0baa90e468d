package io.tenantgateway.tools;

import io.tenantgateway.agent.Version;
import io.tenantgateway.tools.bench.BenchCommand;
import io.tenantgateway.tools.lab.LabCommand;
import picocli.CommandLine.Command;

/**
 * The tools jar's root command: {@code tenant-gateway lab|bench}. The runtime's commands live in the agent jar;
 * {@code bin/tenant-gateway} picks the jar by the command, so users see one {@code tenant-gateway}.
 */
@Command(name = "tenant-gateway", mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        description = "Lab and bench for the tenant-gateway agent (the tools jar; never shipped in the image).",
        subcommands = {LabCommand.class, BenchCommand.class},
        footer = {"", "run, webhook, certs, probe, doctor: in the runtime jar (agent/target/tenant-gateway.jar);"
            + " bin/tenant-gateway runs them from there."})
public final class ToolsCommand {
}
