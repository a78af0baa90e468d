package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ReportFormatTest {
    private static BenchReport report() {
        ScenarioResult bulk = new ScenarioResult(Scenario.BULK, List.of(
                Figure.ratioAtLeast("throughput", "MiB/s", 300, 1000, "direct", 0.5),
                Figure.compared("agent CPU per GiB", "cpu-s/GiB", 1.234, 0.5, "direct, all CPU")),
                "CPU 99% of 2 cores", Map.of("bytes", Map.of("tunnel", Map.of("clientSent", 42))));
        ScenarioResult scale = new ScenarioResult(Scenario.SCALE, List.of(
                Figure.alone("tunnels open", "tunnels", 10_000, "10000 open without error", true)), "memory",
                Map.of());
        return new BenchReport("1.2.3", Instant.parse("2026-01-01T00:00:00Z"), Duration.ofSeconds(12), false,
                "in-process", 2, 0.5, 0.75, "Java 17", "JDK", BenchSizes.full(), List.of(bulk, scale));
    }

    @Test
    void theTableHasOneLinePerFigureWithBaselineRatioAndTarget() {
        String table = ReportFormat.table(report());
        assertThat(table).contains("load 0.50 -> 0.75").contains("1 warm-up + 3 measured runs")
                .contains("tunnel TLS JDK");
        assertThat(table.lines().filter(l -> l.startsWith("bulk ")).toList()).hasSize(2);
        assertThat(table).containsPattern("bulk +throughput \\(MiB/s\\) +300 +1000 +direct +0\\.300 +ratio >= 0\\.5 +NO");
        assertThat(table).containsPattern("scale +tunnels open \\(tunnels\\) +10000 +- +- +10000 open without error +yes");
        assertThat(table).contains("What limits each figure:").contains("bulk       CPU 99% of 2 cores");
        assertThat(table).contains("Some targets NOT met");
    }

    @Test
    void jsonCarriesFiguresAndDetails() {
        JsonNode json = JsonMapper.builder().build().readTree(ReportFormat.json(report()));
        assertThat(json.path("allTargetsMet").asBoolean()).isFalse();
        assertThat(json.path("cores").asInt()).isEqualTo(2);
        JsonNode bulk = json.path("scenarios").get(0);
        assertThat(bulk.path("scenario").asString()).isEqualTo("bulk");
        assertThat(bulk.path("figures").get(0).path("ratio").asDouble()).isEqualTo(0.3);
        assertThat(bulk.path("figures").get(0).path("met").asBoolean()).isFalse();
        assertThat(bulk.path("details").path("bytes").path("tunnel").path("clientSent").asLong()).isEqualTo(42);
        JsonNode scale = json.path("scenarios").get(1).path("figures").get(0);
        assertThat(scale.path("baseline").isNull()).isTrue();
        assertThat(scale.path("met").asBoolean()).isTrue();
    }

    @Test
    void aRatioOverAZeroBaselineIsNotApplicableAndTheReportIsStillComplete() {
        ScenarioResult dial = new ScenarioResult(Scenario.DIAL, List.of(
                Figure.compared("all CPU per dial", "cpu-us", 120, 0, "direct"),
                Figure.comparedWithTarget("p99 dial+echo+close", "ms", 2, 0, "direct", "p99 <= direct p99 + 1 ms",
                        false),
                new Figure("agent CPU per dial", "cpu-us", 80, 0, "direct, all CPU", 80 / 0.0, "", null)),
                "latency", Map.of());
        BenchReport report = new BenchReport("1.2.3", Instant.parse("2026-01-01T00:00:00Z"), Duration.ofSeconds(1),
                true, "in-process", 2, 0.5, 0.5, "Java 17", "JDK", BenchSizes.quick(), List.of(dial));

        assertThat(ReportFormat.table(report))
                .containsPattern("dial +all CPU per dial \\(cpu-us\\) +120 +0\\.000 +direct +n/a +\\n")
                .containsPattern("dial +agent CPU per dial \\(cpu-us\\) +80\\.0 +0\\.000 +direct, all CPU +n/a ")
                .doesNotContain("Infinity").doesNotContain("NaN");
        JsonNode scenario = JsonMapper.builder().build().readTree(ReportFormat.json(report)).path("scenarios").get(0);
        for (JsonNode figure : scenario.path("figures")) {
            assertThat(figure.path("ratio").isNull()).as("%s ratio", figure.path("name")).isTrue();
            assertThat(figure.path("ratioNote").asString()).isEqualTo("baseline is 0");
            assertThat(figure.path("baseline").asDouble()).isZero();
        }
        BenchJson.assertComplete(scenario);
    }

    @Test
    void aMissingBaselineStillFailsCompleteness() {
        ScenarioResult dial = new ScenarioResult(Scenario.DIAL, List.of(
                Figure.compared("all CPU per dial", "cpu-us", 120, Double.NaN, "direct")), "latency", Map.of());
        BenchReport report = new BenchReport("1.2.3", Instant.parse("2026-01-01T00:00:00Z"), Duration.ofSeconds(1),
                true, "in-process", 2, 0.5, 0.5, "Java 17", "JDK", BenchSizes.quick(), List.of(dial));
        JsonNode scenario = JsonMapper.builder().build().readTree(ReportFormat.json(report)).path("scenarios").get(0);

        assertThat(scenario.path("figures").get(0).path("ratioNote").asString()).isEqualTo("baseline not measured");
        assertThatThrownBy(() -> BenchJson.assertComplete(scenario)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("baseline");
    }

    @Test
    void aRatioWithABaselineIsStillComputedAndAFigureWithoutOneShowsADash() {
        assertThat(Figure.ratio(3, 4)).isEqualTo(0.75);
        assertThat(Figure.ratio(3, 0)).isNaN();
        assertThat(Figure.ratio(0, 0)).isNaN();
        assertThat(ReportFormat.ratio(Figure.alone("tunnels open", "tunnels", 1, "", null))).isEqualTo("-");
        assertThat(ReportFormat.ratio(Figure.compared("p50", "ms", 3, 4, "direct"))).isEqualTo("0.750");
    }

    @Test
    void numbersKeepAboutThreeSignificantDigits() {
        assertThat(ReportFormat.number(1234.6)).isEqualTo("1235");
        assertThat(ReportFormat.number(12.345)).isEqualTo("12.3");
        assertThat(ReportFormat.number(1.2345)).isEqualTo("1.23");
        assertThat(ReportFormat.number(0.01234)).isEqualTo("0.012");
        assertThat(ReportFormat.number(Double.NaN)).isEqualTo("-");
    }
}
