package io.tenantgateway.agent.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code tenant-gateway webhook}: the HAMi webhook / admission proxy on its own (filled in by the webhook issue). */
@Command(name = "webhook", mixinStandardHelpOptions = true,
        description = "Serve the HAMi-compatible mutating webhook (and optional upstream proxy) standalone.")
public final class WebhookCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserException("the webhook command is not available in this build yet");
    }
}
