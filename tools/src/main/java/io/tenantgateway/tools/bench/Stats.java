package io.tenantgateway.tools.bench;

import java.util.Arrays;
import java.util.List;

/** Medians and percentiles (nearest rank), the only statistics the report uses. */
final class Stats {
    private Stats() {
    }

    static double median(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("median of no values");
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /** The {@code p}-th percentile (0 < p ≤ 100) of {@code values}, nearest-rank; sorts a copy. */
    static long percentile(long[] values, double p) {
        if (values.length == 0) {
            throw new IllegalArgumentException("percentile of no values");
        }
        if (p <= 0 || p > 100) {
            throw new IllegalArgumentException("p: " + p + " (expected: 0 < p <= 100)");
        }
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }
}
