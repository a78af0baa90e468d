package io.tenantgateway.agent;

import picocli.CommandLine.Command;

@Command(name = "tenant-gateway", mixinStandardHelpOptions = true,
        description = "Konnectivity agent and HAMi GPU-sharing gateway for Kamaji tenant clusters.")
final class TenantGatewayCommand {
}
