package io.tenantgateway.agent.main;

import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.cli.ConfigFileDefaults;
import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.cli.GoFlags;
import io.tenantgateway.agent.cli.UsageHelp;
import io.tenantgateway.common.config.ConfigException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;

/** Entry point of the {@code tenant-gateway} binary. */
public final class Main {
    /**
     * picocli's own switch for the converters it registers by reflection (it loads each type and its factory method's
     * signature to find them). No option of ours has a {@code java.sql} or {@code java.time} type but
     * {@code Duration} (durations are Go-style strings, GoDuration), so those classes stay unloaded (issue 35:
     * classes on the tunnel's path). A value given on the command line ({@code -D}) wins.
     */
    static final String CONVERTER_EXCLUDES = "picocli.converters.excludes";

    /**
     * The Prometheus client's switch for exemplars: they need an OpenTelemetry span, which the agent never has, and
     * each counter's sampler loads the tracer look-ups and a scheduler (issue 35). A value given with {@code -D} wins.
     */
    static final String EXEMPLARS = "io.prometheus.metrics.exemplars_enabled";

    static {
        if (System.getProperty(CONVERTER_EXCLUDES) == null) {
            System.setProperty(CONVERTER_EXCLUDES, "java\\.sql\\..*,java\\.time\\.(?!Duration$).*");
        }
        if (System.getProperty(EXEMPLARS) == null) {
            System.setProperty(EXEMPLARS, "false");
        }
    }

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
        return run(utf8(System.out), utf8(System.err), args);
    }

    /** A writer on {@code stream} that writes UTF-8 and flushes on every line (the tools jar's Main uses it too). */
    public static PrintWriter utf8(java.io.OutputStream stream) {
        return new PrintWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), true);
    }

    /** Runs the CLI writing to the given streams. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        if (args.length > 0 && args[0].equals("run")) {
            return runAgent(out, err, Arrays.copyOfRange(args, 1, args.length));
        }
        CommandLine commandLine = commandLine();
        commandLine.setOut(out);
        commandLine.setErr(err);
        return execute(commandLine, args);
    }

    private static int execute(CommandLine commandLine, String... given) {
        String[] args = goFlags(commandLine, given);
        try {
            ConfigFileDefaults.install(commandLine.getSubcommands().get("run"), args);
        } catch (ConfigException e) {
            ExitCodes.printError(commandLine, e.getMessage());
            commandLine.getErr().flush();
            return ExitCodes.USAGE;
        }
        return commandLine.execute(args);
    }

    /**
     * {@code run} and {@code doctor} take konnectivity-agent's flags, which Go also accepts with one dash
     * ({@code -proxy-server-port=8132}): rewritten to picocli's two before parsing (see {@link GoFlags#normalize}).
     */
    private static String[] goFlags(CommandLine root, String... args) {
        if (args.length == 0 || !(args[0].equals("run") || args[0].equals("doctor"))) {
            return args;
        }
        CommandLine command = root.getSubcommands().get(args[0]);
        CommandLine run = root.getSubcommands().get("run");
        String[] rest = GoFlags.normalize(List.of(command.getCommandSpec(), run.getCommandSpec()),
                Arrays.copyOfRange(args, 1, args.length));
        String[] out = new String[args.length];
        out[0] = args[0];
        System.arraycopy(rest, 0, out, 1, rest.length);
        return out;
    }

    /**
     * {@code run} without building the other commands' models: picocli's reflection over every command costs about
     * 0.4 s at start, which the tunnel would wait for. Same parsing, messages and exit codes as through the root.
     */
    private static int runAgent(PrintWriter out, PrintWriter err, String... given) {
        CommandLine run = AgentCommand.goParsing(UsageHelp.configure(ExitCodes.configure(
                new CommandLine(new AgentCommand()))));
        run.setCommandName("tenant-gateway run");
        run.setOut(out);
        run.setErr(err);
        String[] args = GoFlags.normalize(List.of(run.getCommandSpec()), given);
        try {
            ConfigFileDefaults.install(run, args);
        } catch (ConfigException e) {
            ExitCodes.printError(run, e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        }
        return run.execute(args);
    }

    /** The root command line, configured as {@link #run} uses it (package-private for the help tests). */
    static CommandLine commandLine() {
        CommandLine root = UsageHelp.configure(ExitCodes.configure(new CommandLine(new TenantGatewayCommand())));
        AgentCommand.goParsing(root.getSubcommands().get("run"));
        return root;
    }
}
