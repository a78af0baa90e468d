package io.tenantgateway.agent.main;

import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.ops.CdsTrainingCommand;
import io.tenantgateway.agent.Version;
import io.tenantgateway.agent.cli.CertsCommand;
import io.tenantgateway.agent.cli.WebhookCommand;
import io.tenantgateway.agent.ops.DoctorCommand;
import io.tenantgateway.agent.ops.ProbeCommand;
import picocli.CommandLine.Command;

/**
 * The root command: {@code tenant-gateway <subcommand>}. It lives above every other package (only {@link Main}
 * uses it), so listing the subcommands makes no package depend on another in a circle.
 */
@Command(name = "tenant-gateway", mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        description = "Konnectivity agent and HAMi GPU-sharing gateway for Kamaji tenant clusters.",
        subcommands = {AgentCommand.class, CertsCommand.class, WebhookCommand.class, ProbeCommand.class,
            DoctorCommand.class, CdsTrainingCommand.class, io.tenantgateway.agent.ops.AnnotationsCommand.class},
        // The image ships this jar alone; lab and bench need a mock API server and a scheduler simulator.
        footer = {"", "lab, bench: in the tools jar (tools/target/tenant-gateway-tools.jar in a checkout, not in the"
            + " image); bin/tenant-gateway runs them from there."})
public final class TenantGatewayCommand {
}
