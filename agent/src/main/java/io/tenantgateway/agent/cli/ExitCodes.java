package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.PortInUseException;
import io.tenantgateway.certs.CertificateFileException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Exit codes shared by every subcommand, and the handlers that map failures onto them: a user error prints one
 * line (no stack trace) and exits {@link #USAGE}.
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
            int code = forException(exception);
            if (code == USAGE) {
                err.println(cmd.getColorScheme().errorText("error: " + userCause(exception).getMessage()));
            } else {
                err.println(cmd.getColorScheme().errorText("internal error: " + exception));
                exception.printStackTrace(err);
            }
            err.flush();
            return code;
        });
        commandLine.setParameterExceptionHandler((exception, args) -> {
            CommandLine cmd = exception.getCommandLine();
            String message = GoFlags.message(exception);
            cmd.getErr().println(cmd.getColorScheme().errorText("error: " + message));
            if (!message.startsWith(GoFlags.UNKNOWN_FLAG)) {
                // An unknown flag is one line that names the nearest known flag; the rest point at --help.
                cmd.getErr().println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for usage.");
            }
            cmd.getErr().flush();
            return USAGE;
        });
        return commandLine;
    }

    static int forException(Throwable exception) {
        if (userCause(exception) instanceof PortInUseException) {
            return USAGE;
        }
        if (exception instanceof UserException || exception instanceof CertificateFileException
                || exception instanceof IllegalArgumentException
                || exception instanceof CommandLine.ParameterException) {
            return USAGE;
        }
        return INTERNAL;
    }

    /**
     * The {@link PortInUseException} in {@code exception}'s causes (a component may wrap it while undoing its
     * start), else {@code exception} itself.
     */
    static Throwable userCause(Throwable exception) {
        for (Throwable t = exception; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof PortInUseException) {
                return t;
            }
        }
        return exception;
    }
}
