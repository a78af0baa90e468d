package io.tenantgateway.tools.bench;

/** One run of round trips (nanoseconds each) and the CPU it took; the dial and admission scenarios report these. */
record LatencyRun(long[] latencies, CpuMeter.Usage cpu) {
    private static final double MILLIS = 1_000_000;

    double p50Millis() {
        return Stats.percentile(latencies, 50) / MILLIS;
    }

    double p99Millis() {
        return Stats.percentile(latencies, 99) / MILLIS;
    }
}
