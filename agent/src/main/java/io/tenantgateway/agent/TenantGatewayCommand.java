package io.tenantgateway.agent;

import io.tenantgateway.agent.cli.CertsCommand;
import io.tenantgateway.agent.cli.WebhookCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/** The root command: {@code tenant-gateway <subcommand>}. */
@Command(name = "tenant-gateway", mixinStandardHelpOptions = true,
        versionProvider = TenantGatewayCommand.Version.class,
        description = "Konnectivity agent and HAMi GPU-sharing gateway for Kamaji tenant clusters.",
        subcommands = {AgentCommand.class, CertsCommand.class, WebhookCommand.class,
            io.tenantgateway.agent.ops.ProbeCommand.class, io.tenantgateway.agent.ops.DoctorCommand.class},
        // The image ships this jar alone; lab and bench need a mock API server and a scheduler simulator.
        footer = {"", "lab, bench: in the tools jar (tools/target/tenant-gateway-tools.jar in a checkout, not in the"
            + " image); bin/tenant-gateway runs them from there."})
public final class TenantGatewayCommand {

    /** Reads the version Maven wrote into {@code version.properties}. */
    public static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"tenant-gateway " + version(), "Java " + System.getProperty("java.version")};
        }

        public static String version() {
            try (InputStream in = TenantGatewayCommand.class.getResourceAsStream("version.properties")) {
                Properties properties = new Properties();
                if (in != null) {
                    properties.load(in);
                }
                return properties.getProperty("version", "unknown");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read version.properties", e);
            }
        }
    }
}
