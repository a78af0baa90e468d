package io.tenantgateway.agent.logging;

import ch.qos.logback.core.Context;
import ch.qos.logback.core.status.Status;
import ch.qos.logback.core.status.StatusListener;
import java.io.PrintStream;

/**
 * Logback's own warnings and errors while it starts (an appender that cannot start, a bad encoder), written to stderr
 * as {@code logback: WARN: message}, with the cause's stack trace if any.
 *
 * <p>Why not logback's default: with no status listener on the context, logback prints the same after configuring
 * through {@code StatusPrinter}, whose class initialiser builds a date formatter and with it about 40 {@code java.time}
 * classes in every process, on the agent's start path (BENCHMARKS.md, issue 35). A context with a listener skips that.
 *
 * <p>Threading: logback calls {@link #addStatusEvent} on whatever thread added the status; each status is one
 * {@code println} on stderr.
 */
final class StderrStatusListener implements StatusListener {
    private final PrintStream out;

    private StderrStatusListener(PrintStream out) {
        this.out = out;
    }

    /** Adds a listener to the context and writes out the warnings and errors it already holds. */
    static void install(Context context, PrintStream out) {
        StderrStatusListener listener = new StderrStatusListener(out);
        for (Status status : context.getStatusManager().getCopyOfStatusList()) {
            listener.addStatusEvent(status);
        }
        context.getStatusManager().add(listener);
    }

    @Override
    public void addStatusEvent(Status status) {
        if (status.getLevel() < Status.WARN) {
            return;
        }
        out.println("logback: " + (status.getLevel() == Status.ERROR ? "ERROR" : "WARN") + ": " + status.getMessage());
        if (status.getThrowable() != null) {
            status.getThrowable().printStackTrace(out);
        }
    }
}
