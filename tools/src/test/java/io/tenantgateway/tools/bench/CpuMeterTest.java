package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuMeterTest {
    @Test
    void theProcessFigureIsNeverBelowTheJavaThreadsOwnCpuTime() {
        // The process clock did not tick (10 ms) while two threads ran 3 ms together and a third one started.
        CpuMeter.Sample before = new CpuMeter.Sample(0, Map.of("agent", 1_000L, CpuMeter.PROCESS, 50_000_000L),
                Map.of(1L, 1_000L, 2L, 5_000_000L, 9L, 7_000_000L));
        CpuMeter.Sample after = new CpuMeter.Sample(1_000_000_000L, Map.of("agent", 2_001_000L,
                CpuMeter.PROCESS, 50_000_000L), Map.of(1L, 2_001_000L, 2L, 5_500_000L, 3L, 500_000L));

        CpuMeter.Usage usage = after.since(before);

        assertThat(usage.cpu("agent")).isEqualTo(2_000_000L);
        // thread 9 ended meanwhile: it neither adds nor subtracts
        assertThat(usage.cpu(CpuMeter.PROCESS)).isEqualTo(3_000_000L);
    }

    @Test
    void theProcessClockCountsWhenItIsAhead() {
        CpuMeter.Sample before = new CpuMeter.Sample(0, Map.of(CpuMeter.PROCESS, 0L), Map.of(1L, 0L));
        CpuMeter.Sample after = new CpuMeter.Sample(10, Map.of(CpuMeter.PROCESS, 20_000_000L), Map.of(1L, 1_000L));

        assertThat(after.since(before).cpu(CpuMeter.PROCESS)).isEqualTo(20_000_000L);
    }

    @Test
    void aRealSampleSeesThisThreadWork() {
        CpuMeter meter = new CpuMeter(Map.of("main", Thread.currentThread().getName()));
        CpuMeter.Sample before = meter.sample();
        long spin = System.nanoTime() + 5_000_000;
        long sink = 0;
        while (System.nanoTime() < spin) {
            sink += sink * 31 + 7;
        }
        CpuMeter.Usage usage = meter.sample().since(before);

        assertThat(sink).isNotZero();
        assertThat(usage.cpu(CpuMeter.PROCESS)).isPositive().isGreaterThanOrEqualTo(usage.cpu("main"));
    }
}
