package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void medianOfOddAndEvenCounts() {
        assertThat(Stats.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Stats.median(List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(2.5);
        assertThatThrownBy(() -> Stats.median(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void percentilesUseTheNearestRank() {
        long[] values = LongStream.rangeClosed(1, 200).map(i -> 201 - i).toArray(); // 200 .. 1, unsorted
        assertThat(Stats.percentile(values, 50)).isEqualTo(100);
        assertThat(Stats.percentile(values, 99)).isEqualTo(198);
        assertThat(Stats.percentile(values, 100)).isEqualTo(200);
        assertThat(Stats.percentile(new long[] {7}, 99)).isEqualTo(7);
        assertThat(values[0]).isEqualTo(200); // the input is not sorted in place
        assertThatThrownBy(() -> Stats.percentile(values, 0)).hasMessage("p: 0.0 (expected: 0 < p <= 100)");
    }
}
