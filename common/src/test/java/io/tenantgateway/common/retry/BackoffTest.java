package io.tenantgateway.common.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Both named configurations reproduce the sequences of the classes they replace (RetryBackoff, SyncBackoff). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackoffTest {
    private final Backoff hami = Backoff.HAMI_NODE_LOCK;

    // ------------------------------------------------------------ HAMi node lock (was agent/locks/RetryBackoff)

    @Test
    void hamiStrategyIsFiveAttemptsFrom100msDoubling() {
        assertThat(hami.maxAttempts()).isEqualTo(5);
        assertThat(hami.delayAfter(1, 0.0)).isEqualTo(Duration.ofMillis(100));
        assertThat(hami.delayAfter(2, 0.0)).isEqualTo(Duration.ofMillis(200));
        assertThat(hami.delayAfter(3, 0.0)).isEqualTo(Duration.ofMillis(400));
        assertThat(hami.delayAfter(4, 0.0)).isEqualTo(Duration.ofMillis(800));
        assertThat(hami.hasNext(4)).isTrue();
        assertThat(hami.hasNext(5)).isFalse();
    }

    @Test
    void jitterAddsUpToHalfOfTheStep() {
        assertThat(hami.delayAfter(1, 0.5)).isEqualTo(Duration.ofMillis(125));
        assertThat(hami.delayAfter(4, 0.999_999)).isBetween(Duration.ofMillis(1199), Duration.ofMillis(1200));
    }

    @Test
    void baseDelayIsInjectable() {
        Backoff fast = Backoff.hamiNodeLock(Duration.ofMillis(2));

        assertThat(fast.delayAfter(3, 0.0)).isEqualTo(Duration.ofMillis(8));
        assertThat(fast.maxAttempts()).isEqualTo(5);
    }

    @Test
    void anExecutionOfTheHamiStrategyAllowsFourRetries() {
        Backoff.Execution execution = Backoff.hamiNodeLock(Duration.ofMillis(10)).start(new SplittableRandom(3));
        List<Duration> waits = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waits.add(execution.nextDelay().orElseThrow());
        }
        assertThat(execution.nextDelay()).isEmpty();
        long base = 10;
        for (Duration wait : waits) {
            assertThat(wait.toMillis()).isBetween(base, base + base / 2);
            base *= 2;
        }
    }

    @Test
    void validatesArguments() {
        assertThatThrownBy(() -> new Backoff(Duration.ofMillis(-1), 2, 0.5, null, 5))
                .hasMessage("initialInterval: PT-0.001S (expected: >= 0)");
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, 0.5, 0.5, null, 5))
                .hasMessage("multiplier: 0.5 (expected: >= 1)");
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, 2, -1.5, null, 5)).hasMessage("jitter: -1.5 (expected: >= -1)");
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, 2, 0.5, null, 0))
                .hasMessage("maxAttempts: 0 (expected: >= 1 or UNLIMITED)");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), 2, 0.5, Duration.ofSeconds(1), 5))
                .hasMessage("cap: PT1S (expected: >= initialInterval PT2S)");
        assertThatThrownBy(() -> hami.delayAfter(5, 0.0)).hasMessage("attempt: 5 (expected: 1..4)");
        assertThatThrownBy(() -> hami.delayAfter(1, 1.0)).hasMessage("random: 1.0 (expected: [0, 1))");
    }

    // ------------------------------------------------------------ upstream agent sync (was tunnel/client/SyncBackoff)

    @Test
    void growsOneAndAHalfTimesWithAtMostTenPercentJitterUpToTheCap() {
        Backoff.Execution backoff = Backoff.agentSync(Duration.ofSeconds(1), Duration.ofSeconds(10))
                .start(new SplittableRandom(42));
        List<Duration> waits = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waits.add(backoff.failure());
        }
        double base = 1000;
        for (Duration wait : waits) {
            double capped = Math.min(base, 10_000);
            assertThat(wait.toMillis()).isBetween((long) capped, (long) (capped * 1.1));
            base *= 1.5;
        }
        assertThat(waits.get(9).toMillis()).isBetween(10_000L, 11_000L);
    }

    @Test
    void steadyIntervalResetsTheBackoff() {
        Backoff.Execution backoff = Backoff.agentSync(Duration.ofSeconds(1), Duration.ofSeconds(10))
                .start(new SplittableRandom(1));
        backoff.failure();
        backoff.failure();
        assertThat(backoff.steady().toMillis()).isBetween(1000L, 1100L);
        assertThat(backoff.failure().toMillis()).isBetween(1000L, 1100L);
    }

    @Test
    void agentSyncWithoutJitterIsTheUpstreamSequence() {
        Backoff sync = Backoff.AGENT_SYNC;
        assertThat(List.of(sync.delayAfter(1, 0), sync.delayAfter(2, 0), sync.delayAfter(3, 0), sync.delayAfter(4, 0),
                sync.delayAfter(5, 0), sync.delayAfter(6, 0), sync.delayAfter(60, 0))).containsExactly(
                Duration.ofMillis(1000), Duration.ofMillis(1500), Duration.ofMillis(2250), Duration.ofMillis(3375),
                Duration.ofNanos(5_062_500_000L), Duration.ofNanos(7_593_750_000L), Duration.ofSeconds(10));
        assertThat(sync.delayAfter(60, 0.999_999)).isBetween(Duration.ofMillis(10_999), Duration.ofMillis(11_000));
        assertThat(sync.hasNext(Integer.MAX_VALUE - 1)).isTrue();
    }

    @Test
    void failureNeedsAnUnlimitedBackoff() {
        assertThatThrownBy(() -> hami.start(new SplittableRandom(1)).failure())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("maxAttempts: 5");
    }

    // ------------------------------------------------------------ negative jitter (the device registrar's rounds)

    @Test
    void negativeJitterShortensTheWait() {
        Backoff registrar = Backoff.exponential(Duration.ofSeconds(1)).withCap(Duration.ofSeconds(30)).withJitter(-0.2);
        assertThat(registrar.delayAfter(1, 0.0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(registrar.delayAfter(1, 0.5)).isEqualTo(Duration.ofMillis(900));
        assertThat(registrar.delayAfter(3, 0.0)).isEqualTo(Duration.ofSeconds(4));
        assertThat(registrar.delayAfter(10, 0.0)).isEqualTo(Duration.ofSeconds(30));
        assertThat(registrar.delayAfter(1000, 0.999_999)).isBetween(Duration.ofSeconds(24), Duration.ofMillis(24_001));
    }
}
