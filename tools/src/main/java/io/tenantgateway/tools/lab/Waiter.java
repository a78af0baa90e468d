package io.tenantgateway.tools.lab;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Waits for conditions that have no event to wait on (an agent's readiness, a server's agent list) by checking
 * them every {@link #POLL} on one scheduler thread, while the caller blocks on a future, not a sleep loop.
 */
final class Waiter implements AutoCloseable {
    static final Duration POLL = Duration.ofMillis(20);

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "lab-waiter");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @return whether {@code condition} held within {@code timeout}
     * @throws RuntimeException what the condition threw
     */
    boolean until(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        if (condition.getAsBoolean()) {
            return true;
        }
        CompletableFuture<Void> met = new CompletableFuture<>();
        ScheduledFuture<?> poll = scheduler.scheduleWithFixedDelay(() -> {
            try {
                if (condition.getAsBoolean()) {
                    met.complete(null);
                }
            } catch (RuntimeException e) {
                met.completeExceptionally(e);
            }
        }, POLL.toMillis(), POLL.toMillis(), TimeUnit.MILLISECONDS);
        try {
            met.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime
                    : new IllegalStateException("condition failed", e.getCause());
        } finally {
            poll.cancel(false);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
