package io.tenantgateway.tools.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A whole bench run: where it ran, with what, and each scenario's result.
 *
 * @param loadBefore the 1-minute load average when the run started (other work on the machine skews figures)
 * @param loadAfter the same at the end
 * @param tls the TLS implementation of the tunnel's gRPC connections (BoringSSL or the JDK's)
 */
record BenchReport(String version, Instant startedAt, Duration elapsed, boolean quick, String server, int cores,
        double loadBefore, double loadAfter, String java, String tls, BenchSizes sizes, List<ScenarioResult> results) {

    BenchReport {
        results = List.copyOf(results);
    }

    /** Whether every figure that has a target met it. */
    boolean allTargetsMet() {
        return results.stream().flatMap(r -> r.figures().stream()).allMatch(f -> f.met() == null || f.met());
    }

    Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("version", version);
        map.put("startedAt", startedAt.toString());
        map.put("elapsedSeconds", elapsed.toMillis() / 1000.0);
        map.put("quick", quick);
        map.put("server", server);
        map.put("cores", cores);
        map.put("loadAverageBefore", loadBefore);
        map.put("loadAverageAfter", loadAfter);
        map.put("java", java);
        map.put("tunnelTls", tls);
        Map<String, Object> runs = new LinkedHashMap<>();
        runs.put("warmups", sizes.warmups());
        runs.put("repeats", sizes.repeats());
        map.put("runs", runs);
        map.put("allTargetsMet", allTargetsMet());
        map.put("scenarios", results.stream().map(ScenarioResult::toMap).toList());
        return map;
    }
}
