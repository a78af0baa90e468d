package io.tenantgateway.agent;

import picocli.CommandLine;

/** Entry point of the {@code tenant-gateway} binary. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new TenantGatewayCommand()).execute(args));
    }
}
