package io.tenantgateway.common.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GoDurationTest {
    @ParameterizedTest
    @CsvSource({
        "PT5M, 5m0s",
        "PT1H, 1h0m0s",
        "PT1M30S, 1m30s",
        "PT1.5S, 1.5s",
        "PT30S, 30s",
        "PT0.1S, 100ms",
        "PT0.5S, 500ms",
        "PT0.000001S, 1µs",
        "PT-1.5S, -1.5s",
        "PT0.0015S, 1.5ms",
        "PT0.000002S, 2µs",
        "PT0.000000999S, 999ns",
        "PT0S, 0s",
        "PT26H3M4.05S, 26h3m4.05s",
        "PT-5M, -5m0s",
    })
    void formatsLikeGo(String iso, String go) {
        assertThat(GoDuration.format(Duration.parse(iso))).isEqualTo(go);
    }

    @ParameterizedTest
    @CsvSource({
        "5m, PT5M",
        "5m0s, PT5M",
        "1h30m, PT1H30M",
        "250ms, PT0.25S",
        "1.5s, PT1.5S",
        "90s, PT1M30S",
        "0, PT0S",
        "300us, PT0.0003S",
        "-1m, PT-1M",
    })
    void parsesGoText(String go, String iso) {
        assertThat(GoDuration.parse("--node-lock-timeout", go)).isEqualTo(Duration.parse(iso));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "5x", "m", "1h30", ".s", "1..5s"})
    void rejectsMalformedText(String text) {
        assertThatThrownBy(() -> GoDuration.parse("--node-lock-timeout", text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--node-lock-timeout: " + text + " (expected: a duration such as 5m, 90s, 1h30m, 250ms)");
    }

    @Test
    void roundTripsTheLockTimeout() {
        assertThat(GoDuration.parse("--node-lock-timeout", GoDuration.format(Duration.ofMinutes(5)))).isEqualTo(Duration.ofMinutes(5));
    }
}
