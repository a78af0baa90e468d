package io.tenantgateway.agent.bench;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of the report: a figure through the tunnel, its baseline measured in the same run, and their ratio.
 *
 * @param name what is measured ({@code throughput}, {@code p99}, ...)
 * @param unit unit of {@code tunnel} and {@code baseline}
 * @param tunnel the figure through the tunnel (median over the repeats)
 * @param baseline the same figure without the tunnel, or {@code NaN} when there is none
 * @param baselineName what the baseline is ({@code direct}, {@code B alone}, ...)
 * @param ratio tunnel / baseline, or {@code NaN}
 * @param target the target for this figure, or "" when it has none
 * @param met whether the target is met; {@code null} when there is no target
 */
record Figure(String name, String unit, double tunnel, double baseline, String baselineName, double ratio,
        String target, Boolean met) {

    Figure {
        requireNonNull(name, "name");
        requireNonNull(unit, "unit");
        requireNonNull(baselineName, "baselineName");
        requireNonNull(target, "target");
    }

    /** A figure with a baseline and a ratio target ({@code ratio >= minRatio}). */
    static Figure ratioAtLeast(String name, String unit, double tunnel, double baseline, String baselineName,
            double minRatio) {
        double ratio = tunnel / baseline;
        return new Figure(name, unit, tunnel, baseline, baselineName, ratio, "ratio >= " + minRatio,
                ratio >= minRatio);
    }

    /** A figure with a baseline and no target. */
    static Figure compared(String name, String unit, double tunnel, double baseline, String baselineName) {
        return new Figure(name, unit, tunnel, baseline, baselineName, tunnel / baseline, "", null);
    }

    /** A figure without a baseline. */
    static Figure alone(String name, String unit, double tunnel, String target, Boolean met) {
        return new Figure(name, unit, tunnel, Double.NaN, "", Double.NaN, target, met);
    }

    Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("name", name);
        map.put("unit", unit);
        map.put("tunnel", finite(tunnel));
        map.put("baseline", finite(baseline));
        map.put("baselineName", baselineName);
        map.put("ratio", finite(ratio));
        map.put("target", target);
        map.put("met", met);
        return map;
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }
}
