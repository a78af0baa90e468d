package io.tenantgateway.tools.bench;

import io.tenantgateway.common.config.ConfigException;
import java.time.Duration;
import java.util.List;

/**
 * How much each scenario moves. {@link #full()} is the definition; {@link #quick()} is small enough for a
 * smoke run of everything in well under 30 seconds.
 *
 * @param bulkBytes bytes each direction through one connection
 * @param parallelConnections connections open at once in the parallel scenario
 * @param parallelBytes bytes each direction per parallel connection
 * @param dials sequential dial + echo + close round trips per repeat
 * @param scaleSteps open idle tunnels at which memory is measured (ascending)
 * @param isolationBytes bytes each direction tunnel B moves per repeat
 * @param admissionRate requests per second of the fixed-rate admission run
 * @param admissionFixedRun length of one fixed-rate run
 * @param admissionMaxRun length of one maximum-rate run
 * @param admissionConcurrency requests in flight in the maximum-rate run (one connection each)
 * @param footprintBytes bytes (both ways together) of each of the footprint scenario's two loads
 * @param footprintIdle how long the footprint scenario's agent sits connected before its idle RSS is read
 * @param warmups runs discarded before the measured ones, per mode
 * @param repeats measured runs per mode; the median is reported
 */
public record BenchSizes(long bulkBytes, int parallelConnections, long parallelBytes, int dials,
        List<Integer> scaleSteps, long isolationBytes, int admissionRate, Duration admissionFixedRun,
        Duration admissionMaxRun, int admissionConcurrency, long footprintBytes, Duration footprintIdle, int warmups, int repeats) {
    private static final long MIB = 1024 * 1024;

    public BenchSizes {
        positive("bulkBytes", bulkBytes);
        positive("parallelConnections", parallelConnections);
        positive("parallelBytes", parallelBytes);
        positive("dials", dials);
        scaleSteps = List.copyOf(scaleSteps);
        if (scaleSteps.isEmpty()) {
            throw new IllegalArgumentException("scaleSteps: [] (expected: at least one step)");
        }
        for (int i = 0; i < scaleSteps.size(); i++) {
            positive("scaleSteps", scaleSteps.get(i));
            if (i > 0 && scaleSteps.get(i) <= scaleSteps.get(i - 1)) {
                throw new IllegalArgumentException("scaleSteps: " + scaleSteps + " (expected: ascending)");
            }
        }
        positive("isolationBytes", isolationBytes);
        positive("admissionRate", admissionRate);
        positive("admissionConcurrency", admissionConcurrency);
        positive("footprintBytes", footprintBytes);
        if (footprintIdle.isNegative()) {
            throw new IllegalArgumentException("footprintIdle: " + footprintIdle + " (expected: >= 0)");
        }
        if (admissionFixedRun.isNegative() || admissionFixedRun.isZero() || admissionMaxRun.isNegative()
                || admissionMaxRun.isZero()) {
            throw new IllegalArgumentException("admission runs: " + admissionFixedRun + ", " + admissionMaxRun
                    + " (expected: > 0)");
        }
        if (warmups < 0) {
            throw new ConfigException("--warmups", warmups, ">= 0");
        }
        positive("--repeats", repeats);
    }

    /** The sizes. */
    public static BenchSizes full() {
        return new BenchSizes(256 * MIB, 64, 16 * MIB, 2_000, List.of(1_000, 5_000, 10_000), 128 * MIB, 200,
                Duration.ofSeconds(5), Duration.ofSeconds(3), 8, 1024 * MIB, Duration.ofSeconds(3), 1, 3);
    }

    /** Small sizes for smoke runs (CI, after an install). */
    public static BenchSizes quick() {
        return new BenchSizes(16 * MIB, 8, 2 * MIB, 200, List.of(100, 300), 8 * MIB, 200, Duration.ofSeconds(1),
                Duration.ofMillis(500), 4, 64 * MIB, Duration.ofMillis(500), 1, 1);
    }

    public BenchSizes withRuns(int newWarmups, int newRepeats) {
        return new BenchSizes(bulkBytes, parallelConnections, parallelBytes, dials, scaleSteps, isolationBytes,
                admissionRate, admissionFixedRun, admissionMaxRun, admissionConcurrency, footprintBytes, footprintIdle, newWarmups,
                newRepeats);
    }

    private static void positive(String name, long value) {
        if (value <= 0) {
            // A flag's value is the user's to fix; the other sizes are the code's.
            throw name.startsWith("--") ? new ConfigException(name, value, "> 0")
                    : new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }
}
