package io.tenantgateway.agent.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RetryBackoffTest {
    private final RetryBackoff hami = RetryBackoff.HAMI_DEFAULT;

    @Test
    void hamiStrategyIsFiveAttemptsFrom100msDoubling() {
        assertThat(hami.steps()).isEqualTo(5);
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
        RetryBackoff fast = RetryBackoff.hamiWithBaseDelay(Duration.ofMillis(2));

        assertThat(fast.delayAfter(3, 0.0)).isEqualTo(Duration.ofMillis(8));
        assertThat(fast.steps()).isEqualTo(5);
    }

    @Test
    void validatesArguments() {
        assertThatThrownBy(() -> new RetryBackoff(Duration.ofMillis(-1), 2, 0.5, 5))
                .hasMessage("baseDelay: PT-0.001S (expected: >= 0)");
        assertThatThrownBy(() -> new RetryBackoff(Duration.ZERO, 0.5, 0.5, 5)).hasMessage("factor: 0.5 (expected: >= 1)");
        assertThatThrownBy(() -> new RetryBackoff(Duration.ZERO, 2, -1, 5)).hasMessage("jitter: -1.0 (expected: >= 0)");
        assertThatThrownBy(() -> new RetryBackoff(Duration.ZERO, 2, 0.5, 0)).hasMessage("steps: 0 (expected: >= 1)");
        assertThatThrownBy(() -> hami.delayAfter(5, 0.0)).hasMessage("attempt: 5 (expected: 1..4)");
        assertThatThrownBy(() -> hami.delayAfter(1, 1.0)).hasMessage("random: 1.0 (expected: [0, 1))");
    }
}
