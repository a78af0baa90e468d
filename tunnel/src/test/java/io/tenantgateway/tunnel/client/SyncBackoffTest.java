package io.tenantgateway.tunnel.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SyncBackoffTest {
    @Test
    void growsOneAndAHalfTimesWithAtMostTenPercentJitterUpToTheCap() {
        SyncBackoff backoff = new SyncBackoff(Duration.ofSeconds(1), Duration.ofSeconds(10),
                new SplittableRandom(42));
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
        SyncBackoff backoff = new SyncBackoff(Duration.ofSeconds(1), Duration.ofSeconds(10),
                new SplittableRandom(1));
        backoff.failure();
        backoff.failure();
        assertThat(backoff.steady().toMillis()).isBetween(1000L, 1100L);
        assertThat(backoff.failure().toMillis()).isBetween(1000L, 1100L);
    }
}
