package io.tenantgateway.tools.bench;

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
 * @param ratio tunnel / baseline, or {@code NaN}: when there is no baseline, or when the baseline is 0 (a figure
 *     below its clock's resolution, a memory delta of no page) or was not measured; such a ratio is reported as
 *     {@code n/a} in the table and as {@code "ratio": null} with {@code "ratioNote"} saying why in JSON
 * @param target the target for this figure, or "" when it has none
 * @param met whether the target is met; {@code null} when there is no target
 */
record Figure(String name, String unit, double tunnel, double baseline, String baselineName, double ratio,
        String target, Boolean met) {

    static final String NOT_APPLICABLE = "n/a";

    Figure {
        requireNonNull(name, "name");
        requireNonNull(unit, "unit");
        requireNonNull(baselineName, "baselineName");
        requireNonNull(target, "target");
        if (!Double.isFinite(ratio)) {
            ratio = Double.NaN; // x / 0 is no figure: n/a, not infinity
        }
    }

    /** {@code tunnel / baseline}, or {@code NaN} when either is not finite or the baseline is 0. */
    static double ratio(double tunnel, double baseline) {
        return Double.isFinite(tunnel) && Double.isFinite(baseline) && baseline != 0 ? tunnel / baseline : Double.NaN;
    }

    /** A figure with a baseline and a ratio target ({@code ratio >= minRatio}; not met when the ratio is n/a). */
    static Figure ratioAtLeast(String name, String unit, double tunnel, double baseline, String baselineName,
            double minRatio) {
        double ratio = ratio(tunnel, baseline);
        return new Figure(name, unit, tunnel, baseline, baselineName, ratio, "ratio >= " + minRatio,
                ratio >= minRatio);
    }

    /** A figure with a baseline and no target. */
    static Figure compared(String name, String unit, double tunnel, double baseline, String baselineName) {
        return new Figure(name, unit, tunnel, baseline, baselineName, ratio(tunnel, baseline), "", null);
    }

    /** A figure with a baseline and a target on the figure itself ({@code met} decided by the caller). */
    static Figure comparedWithTarget(String name, String unit, double tunnel, double baseline, String baselineName,
            String target, boolean met) {
        return new Figure(name, unit, tunnel, baseline, baselineName, ratio(tunnel, baseline), target, met);
    }

    /** A figure without a baseline. */
    static Figure alone(String name, String unit, double tunnel, String target, Boolean met) {
        return new Figure(name, unit, tunnel, Double.NaN, "", Double.NaN, target, met);
    }

    /** Whether the figure has a baseline but no ratio over it ({@link #ratioNote()} says why). */
    boolean ratioNotApplicable() {
        return !baselineName.isEmpty() && Double.isNaN(ratio);
    }

    /** Why the ratio is n/a ({@code null} when there is a ratio, or no baseline at all). */
    String ratioNote() {
        if (!ratioNotApplicable()) {
            return null;
        }
        if (baseline == 0) {
            return "baseline is 0";
        }
        return Double.isFinite(baseline) ? "figure not measured" : "baseline not measured";
    }

    Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("name", name);
        map.put("unit", unit);
        map.put("tunnel", finite(tunnel));
        map.put("baseline", finite(baseline));
        map.put("baselineName", baselineName);
        map.put("ratio", finite(ratio));
        map.put("ratioNote", ratioNote());
        map.put("target", target);
        map.put("met", met);
        return map;
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }
}
