package io.tenantgateway.agent;

import io.tenantgateway.agent.cli.ExitCodes;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/** Entry point of the {@code tenant-gateway} binary. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the CLI on the process's stdout/stderr and returns the exit code. Output is UTF-8 whatever the locale,
     * as kubectl's is: containers often run without {@code LANG}, and the JVM would print the tables' arrows and
     * multiplication signs as '?'.
     */
    public static int run(String... args) {
        return run(new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true),
                new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true), args);
    }

    /** Runs the CLI writing to the given streams. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine commandLine = commandLine();
        commandLine.setOut(out);
        commandLine.setErr(err);
        return execute(commandLine, args);
    }

    private static int execute(CommandLine commandLine, String... args) {
        try {
            ConfigFileDefaults.install(commandLine.getSubcommands().get("run"), args);
        } catch (IllegalArgumentException e) {
            commandLine.getErr().println(commandLine.getColorScheme().errorText("error: " + e.getMessage()));
            commandLine.getErr().flush();
            return ExitCodes.USAGE;
        }
        return commandLine.execute(args);
    }

    private static CommandLine commandLine() {
        return ExitCodes.configure(new CommandLine(new TenantGatewayCommand()));
    }
}
