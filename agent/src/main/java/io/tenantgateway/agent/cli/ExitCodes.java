package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.text.PeerText;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Exit codes shared by every subcommand, and the handlers that map failures onto them. One rule: a
 * {@link ConfigException} anywhere in a failure's causes (bad user input: a flag, a {@code --config} key, a file a
 * flag names, a port in use) prints its one line (no stack trace) and exits {@link #USAGE}, as a malformed command
 * line does; anything else is a bug and exits {@link #INTERNAL} with its stack trace. The line is escaped
 * ({@link PeerText#escape}): a value it quotes (a file's content, a Node's field) cannot drive the terminal.
 */
public final class ExitCodes {
    public static final int OK = 0;
    /** A check ran and failed (verify, probe, doctor, lab). */
    public static final int FAILED = 1;
    /** Bad input: flags, config, files. The message says what was wrong. */
    public static final int USAGE = 2;
    /** An unexpected internal error (a bug): message plus stack trace. */
    public static final int INTERNAL = 70;

    private ExitCodes() {
    }

    public static CommandLine configure(CommandLine commandLine) {
        commandLine.setExitCodeExceptionMapper(ExitCodes::forException);
        commandLine.setExecutionExceptionHandler((exception, cmd, parseResult) -> {
            PrintWriter err = cmd.getErr();
            String userError = userError(exception);
            if (userError != null) {
                printError(cmd, userError);
            } else {
                err.println(cmd.getColorScheme().errorText("internal error: "
                        + PeerText.escape(exception.toString())));
                exception.printStackTrace(err);
            }
            err.flush();
            return userError != null ? USAGE : INTERNAL;
        });
        commandLine.setParameterExceptionHandler((exception, args) -> {
            CommandLine cmd = exception.getCommandLine();
            String message = GoFlags.message(exception);
            printError(cmd, message);
            if (!message.startsWith(GoFlags.UNKNOWN_FLAG)) {
                // An unknown flag is one line that names the nearest known flag; the rest point at --help.
                cmd.getErr().println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for usage.");
            }
            cmd.getErr().flush();
            return USAGE;
        });
        return commandLine;
    }

    /** {@code error: message} on {@code cmd}'s error stream, escaped, in its error colour (not flushed). */
    public static void printError(CommandLine cmd, String message) {
        cmd.getErr().println(cmd.getColorScheme().errorText("error: " + PeerText.escape(message)));
    }

    /** {@link #USAGE} for a user error ({@link #userError}), {@link #INTERNAL} for anything else. */
    static int forException(Throwable exception) {
        return userError(exception) != null ? USAGE : INTERNAL;
    }

    /**
     * The one line to print when {@code exception} is the user's to fix, else {@code null} (a bug): the message of
     * the first {@link ConfigException} in its causes (a component may wrap it, e.g. while undoing its start), else
     * that of a picocli {@link CommandLine.ParameterException} (a command line parsed inside a command, as
     * {@code doctor} parses {@code run}'s flags).
     */
    static String userError(Throwable exception) {
        ConfigException config = ConfigException.in(exception);
        if (config != null) {
            return config.getMessage();
        }
        for (Throwable t = exception; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CommandLine.ParameterException parameter) {
                return GoFlags.message(parameter);
            }
        }
        return null;
    }
}
