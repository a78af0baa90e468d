package io.tenantgateway.tools.bench;

import java.util.Locale;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** Renders a {@link BenchReport} as the human table or as JSON ({@code --json}). */
final class ReportFormat {
    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private ReportFormat() {
    }

    static String json(BenchReport report) {
        return JSON.writeValueAsString(report.toMap());
    }

    static String table(BenchReport report) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "tenant-gateway bench %s%s: %d cores, load %.2f -> %.2f, %s,"
                + " %d warm-up + %d measured runs (median), %s, tunnel TLS %s%n", report.version(),
                report.quick() ? " --quick" : "", report.cores(), report.loadBefore(), report.loadAfter(), report.java(),
                report.sizes().warmups(), report.sizes().repeats(), report.server(), report.tls()));
        String row = "%-10s  %-34s  %10s  %10s  %-16s  %7s  %-26s  %s%n";
        out.append(String.format(Locale.ROOT, row, "SCENARIO", "FIGURE", "TUNNEL", "BASELINE", "(BASELINE IS)",
                "RATIO", "TARGET", "MET"));
        for (ScenarioResult result : report.results()) {
            for (Figure figure : result.figures()) {
                out.append(String.format(Locale.ROOT, row, result.scenario().cliName(),
                        figure.name() + " (" + figure.unit() + ")", number(figure.tunnel()),
                        number(figure.baseline()), figure.baselineName(), ratio(figure), figure.target(),
                        figure.met() == null ? "" : figure.met() ? "yes" : "NO"));
            }
        }
        out.append(String.format(Locale.ROOT, "%nWhat limits each figure:%n"));
        for (ScenarioResult result : report.results()) {
            out.append(String.format(Locale.ROOT, "  %-10s %s%n", result.scenario().cliName(), result.limits()));
        }
        out.append(String.format(Locale.ROOT, "%nTook %.0f s. %s%n", report.elapsed().toMillis() / 1000.0,
                report.allTargetsMet() ? "Every target met." : "Some targets NOT met (see MET)."));
        return out.toString();
    }

    /** The ratio; "n/a" when there is a baseline but no ratio over it (a baseline of 0), "-" when no baseline. */
    static String ratio(Figure figure) {
        return figure.ratioNotApplicable() ? Figure.NOT_APPLICABLE : number(figure.ratio());
    }

    /** Three significant digits or so; "-" for none. */
    static String number(double value) {
        if (!Double.isFinite(value)) {
            return "-";
        }
        double abs = Math.abs(value);
        if (abs >= 100) {
            return String.format(Locale.ROOT, "%.0f", value);
        }
        if (abs >= 10) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        if (abs >= 1) {
            return String.format(Locale.ROOT, "%.2f", value);
        }
        return String.format(Locale.ROOT, "%.3f", value);
    }
}
