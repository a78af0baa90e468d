package io.tenantgateway.tools;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.cli.UsageHelp;
import java.io.PrintWriter;
import picocli.CommandLine;

/** Entry point of the tools jar ({@code tenant-gateway-tools.jar}): {@code lab} and {@code bench}. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI on the process's stdout/stderr, as UTF-8 whatever the locale (as the agent jar's Main does). */
    public static int run(String... args) {
        return run(io.tenantgateway.agent.main.Main.utf8(System.out), io.tenantgateway.agent.main.Main.utf8(System.err),
                args);
    }

    /** Runs the CLI writing to the given streams. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine commandLine = commandLine();
        commandLine.setOut(out);
        commandLine.setErr(err);
        return commandLine.execute(args);
    }

    /** The root command line, configured as {@link #run} uses it (package-private for the help tests). */
    static CommandLine commandLine() {
        return UsageHelp.configure(ExitCodes.configure(new CommandLine(new ToolsCommand())));
    }
}
