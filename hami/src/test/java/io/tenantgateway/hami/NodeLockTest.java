package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeLockTest {
    @Test
    void parsesTheSchedulersValue() throws Exception {
        NodeLock lock = NodeLock.parse("2025-03-04T05:06:07Z,team-a,train-0");

        assertThat(lock.lockedAt()).isEqualTo(Instant.parse("2025-03-04T05:06:07Z"));
        assertThat(lock.namespace()).isEqualTo("team-a");
        assertThat(lock.podName()).isEqualTo("train-0");
        assertThat(lock.hasHolder()).isTrue();
        assertThat(lock.holder()).isEqualTo("team-a/train-0");
    }

    @Test
    void parsesTheSchedulersLocalTimeOffset() throws Exception {
        // HAMi formats time.Now() in the scheduler's zone.
        assertThat(NodeLock.parse("2025-03-04T13:06:07+08:00,ns,p").lockedAt())
                .isEqualTo(Instant.parse("2025-03-04T05:06:07Z"));
    }

    @ParameterizedTest
    @CsvSource({
        "2026-12-07T20:45:34Z,                2026-12-07T20:45:34Z",
        "2026-12-07T20:45:34.123456789Z,      2026-12-07T20:45:34.123456789Z",
        "2026-12-07T20:45:34.5+01:00,         2026-12-07T19:45:34.5Z",
    })
    void parsesSecondsAndTheNanosecondsHamiWritesAfterV210(String time, Instant expected) throws Exception {
        // v2.10 and earlier write time.RFC3339 (seconds); later releases write time.RFC3339Nano.
        assertThat(NodeLock.parse(time + ",team-a,train-0")).isEqualTo(new NodeLock(expected, "team-a", "train-0"));
        assertThat(NodeLock.parse(time).lockedAt()).isEqualTo(expected);
    }

    @Test
    void parsesLegacyBareTime() throws Exception {
        NodeLock lock = NodeLock.parse("2025-03-04T05:06:07Z");

        assertThat(lock.hasHolder()).isFalse();
        assertThat(lock.holder()).isEqualTo("-");
        assertThat(lock.isHeldBy("", "")).isFalse();
        assertThat(lock.encode()).isEqualTo("2025-03-04T05:06:07Z");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "2025-03-04T05:06:07Z,ns                 | malformed lock annotation: expected 3 parts, got 2",
        "2025-03-04T05:06:07Z,ns,pod,extra       | malformed lock annotation: expected 3 parts, got 4",
        "',,,,'                                  | malformed lock annotation: expected 3 parts, got 5",
        "garbage                                 | malformed lock annotation: time \"garbage\" (expected: RFC3339)",
        "yesterday,ns,pod                        | malformed lock annotation: time \"yesterday\" (expected: RFC3339)",
        "2025-03-04T05:06:07Z,,pod               | malformed lock annotation: holder \"/pod\" (expected: <namespace>,<pod>)",
    })
    void rejectsMalformedValuesWithTheSchedulersMessage(String value, String message) {
        assertThatThrownBy(() -> NodeLock.parse(value))
                .isInstanceOf(MalformedNodeLockException.class)
                .hasMessage(message)
                .satisfies(e -> assertThat(((MalformedNodeLockException) e).value()).isEqualTo(value));
    }

    @Test
    void encodesUtcSecondsLikeGoRfc3339() throws Exception {
        NodeLock lock = NodeLock.heldBy(Instant.parse("2025-03-04T05:06:07.750Z"), "ns", "p");

        assertThat(lock.encode()).isEqualTo("2025-03-04T05:06:07Z,ns,p");
        assertThat(NodeLock.parse(lock.encode())).isEqualTo(lock);
        assertThat(NodeLock.heldBy(Instant.parse("2025-03-04T05:06:00Z"), "ns", "p").encode())
                .isEqualTo("2025-03-04T05:06:00Z,ns,p"); // seconds always written, as Go does
    }

    @Test
    void ownerIsTheExactNamespaceAndPodNotASuffix() throws Exception {
        NodeLock lock = NodeLock.parse("2025-03-04T05:06:07Z,ns,xp");

        assertThat(lock.isHeldBy("ns", "xp")).isTrue();
        assertThat(lock.isHeldBy("ns", "p")).isFalse();
        assertThat(lock.isHeldBy("other", "xp")).isFalse();
    }

    @Test
    void heldByRejectsAnEmptyHolder() {
        assertThatThrownBy(() -> NodeLock.heldBy(Instant.EPOCH, "", "p"))
                .hasMessage("holder: \"/p\" (expected: non-empty namespace and pod name)");
    }
}
