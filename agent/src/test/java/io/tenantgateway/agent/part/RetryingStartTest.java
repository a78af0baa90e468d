package io.tenantgateway.agent.part;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.common.net.PortInUseException;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.common.retry.Backoff;
import java.io.IOException;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(60)
class RetryingStartTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final CompletableFuture<RuntimeException> fatal = new CompletableFuture<>();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private static final class Part implements AutoCloseable {
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public void close() {
            closed.set(true);
        }
    }

    private <T extends AutoCloseable> RetryingStart<T> start(PartContext.Attempt<T> attempt) {
        return new RetryingStart<>("lock-controller-synced", "lock controller", attempt,
                part -> HealthCheck.Result.OK, e -> "tenant API http://127.0.0.1:1 unreachable: " + e.getMessage(),
                scheduler, Backoff.agentSync(Duration.ofMillis(5), Duration.ofMillis(20)).start(new Random(1)),
                fatal::complete);
    }

    /** Retried, not fatal: an I/O failure, and a plain IllegalArgumentException (not a ConfigException). */
    static Stream<Exception> retriedFailures() {
        return Stream.of(new IOException("Connection refused"),
                new IllegalArgumentException("Secret kube-system/tls: no key tls.crt"));
    }

    @ParameterizedTest
    @MethodSource("retriedFailures")
    void retriesUntilTheAttemptWorksAndSaysWhyMeanwhile(Exception failure) {
        AtomicInteger attempts = new AtomicInteger();
        Part part = new Part();
        RetryingStart<Part> start = start(() -> {
            if (attempts.incrementAndGet() < 4) {
                throw failure;
            }
            return part;
        });
        HealthCheck check = start.check();
        assertThat(check.run()).isEqualTo(HealthCheck.Result.failed("not started yet"));

        start.start();
        await().atMost(WAIT).until(() -> start.get().isPresent());
        assertThat(attempts).hasValue(4);
        assertThat(check.run().ok()).isTrue();
        assertThat(fatal).isNotDone();
        start.close();
        assertThat(part.closed).isTrue();
    }

    @Test
    void aFailingAttemptIsNamedInReadinessWithTheNextRetry() {
        RetryingStart<Part> start = start(() -> {
            throw new IOException("Connection refused");
        });
        start.start();
        await().atMost(WAIT).untilAsserted(() -> assertThat(start.check().run().reason())
                .matches("tenant API http://127\\.0\\.0\\.1:1 unreachable: Connection refused; retrying in \\d+ms"
                        + " \\(attempt \\d+\\)"));
        start.close();
        assertThat(start.get()).isEmpty();
    }

    @Test
    void aConfigurationErrorIsNotRetriedAndReportedAsFatal() {
        AtomicInteger attempts = new AtomicInteger();
        RetryingStart<Part> start = start(() -> {
            attempts.incrementAndGet();
            // Found in the causes: a part may wrap it while undoing its start.
            throw new IllegalStateException("webhook start failed",
                    new PortInUseException("--webhook-listen", "127.0.0.1:9443", null));
        });
        start.start();
        await().atMost(WAIT).until(fatal::isDone);
        assertThat(fatal.join()).hasMessage("--webhook-listen: 127.0.0.1:9443 is in use");
        assertThat(attempts).hasValue(1);
        assertThat(start.check().run()).isEqualTo(HealthCheck.Result.failed(
                "--webhook-listen: 127.0.0.1:9443 is in use"));
    }

    @Test
    void aPartThatStartsAfterCloseIsClosedAtOnce() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> running = new CompletableFuture<>();
        Part part = new Part();
        RetryingStart<Part> start = start(() -> {
            running.complete(null);
            release.join();
            return part;
        });
        start.start();
        running.join();
        start.close();
        release.complete(null);
        await().untilTrue(part.closed);
        assertThat(start.get()).isEmpty();
    }
}
