package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one scenario found.
 *
 * @param scenario which one
 * @param figures the report lines
 * @param limits what limits the figures on this machine (CPU shares per component, ...), one sentence
 * @param details everything else, for {@code --json}: byte counts that prove the transfer, per-repeat values, CPU
 */
record ScenarioResult(Scenario scenario, List<Figure> figures, String limits, Map<String, Object> details) {

    ScenarioResult {
        requireNonNull(scenario, "scenario");
        figures = List.copyOf(figures);
        requireNonNull(limits, "limits");
        details = new LinkedHashMap<>(details);
    }

    Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("scenario", scenario.cliName());
        map.put("figures", figures.stream().map(Figure::toMap).toList());
        map.put("limits", limits);
        map.put("details", details);
        return map;
    }
}
