package io.tenantgateway.agent.cli;

import io.tenantgateway.webhook.WebhookServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;

/**
 * {@code tenant-gateway webhook} run in the background as {@code Main} runs it (with {@link ExitCodes}), capturing
 * what it prints: {@link #started()} waits until it serves, {@link #stop()} stops it and gives its exit code.
 */
final class WebhookInBackground {
    private final WebhookCommand command = new WebhookCommand();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final CompletableFuture<Integer> exit;

    private WebhookInBackground(String... args) {
        CommandLine cli = ExitCodes.configure(new CommandLine(command));
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        exit = CompletableFuture.supplyAsync(() -> cli.execute(args));
    }

    /** Starts {@code tenant-gateway webhook args...} on another thread. */
    static WebhookInBackground start(String... args) {
        return new WebhookInBackground(args);
    }

    /** The server, once it serves (at most {@code seconds} from now). */
    WebhookServer started(long seconds) throws Exception {
        return command.started().get(seconds, TimeUnit.SECONDS);
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }

    /** The exit code of a command that ends by itself (at most {@code seconds} from now). */
    int exitCode(long seconds) throws Exception {
        return exit.get(seconds, TimeUnit.SECONDS);
    }

    /** Stops the command and waits (at most 30 s) for its exit code. */
    int stop() throws Exception {
        command.stop();
        return exit.get(30, TimeUnit.SECONDS);
    }
}
