package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Checks on a {@code bench --json} report that hold whatever the machine's speed: completeness and byte counts. */
final class BenchJson {
    private BenchJson() {
    }

    static JsonNode parse(String json) {
        return JsonMapper.builder().build().readTree(json);
    }

    static JsonNode scenario(JsonNode report, String name) {
        for (JsonNode scenario : report.path("scenarios")) {
            if (scenario.path("scenario").asString().equals(name)) {
                return scenario;
            }
        }
        throw new AssertionError("no scenario " + name + " in " + report);
    }

    static List<String> scenarioNames(JsonNode report) {
        List<String> names = new ArrayList<>();
        report.path("scenarios").forEach(s -> names.add(s.path("scenario").asString()));
        return names;
    }

    /**
     * Every figure has a name, a unit and a finite value, a measured baseline when it names one and a ratio over it
     * (or, over a baseline of 0, {@code n/a}: a null ratio with a note); every scenario says what limits it.
     */
    static void assertComplete(JsonNode scenario) {
        String name = scenario.path("scenario").asString();
        assertThat(scenario.path("figures").size()).as("%s figures", name).isPositive();
        for (JsonNode figure : scenario.path("figures")) {
            assertThat(figure.path("name").asString()).as("%s figure name", name).isNotBlank();
            assertThat(figure.path("unit").asString()).as("%s unit", name).isNotBlank();
            assertThat(figure.path("tunnel").isNumber()).as("%s %s value", name, figure.path("name")).isTrue();
            if (!figure.path("baselineName").asString().isEmpty()) {
                assertThat(figure.path("baseline").isNumber()).as("%s %s baseline", name, figure.path("name"))
                        .isTrue();
                if (figure.path("ratio").isNull() && figure.path("baseline").isNumber()
                        && figure.path("baseline").asDouble() == 0) {
                    // n/a: nothing to divide by; the figure and its baseline are there
                    assertThat(figure.path("ratioNote").asString()).as("%s %s ratio n/a note", name,
                            figure.path("name")).isNotBlank();
                } else {
                    assertThat(figure.path("ratio").isNumber()).as("%s %s ratio", name, figure.path("name"))
                            .isTrue();
                }
            }
            if (!figure.path("target").asString().isEmpty()) {
                assertThat(figure.path("met").isBoolean()).as("%s %s met", name, figure.path("name")).isTrue();
            }
        }
        assertThat(scenario.path("limits").asString()).as("%s limits", name).isNotBlank();
    }

    /** Both ends of every transfer saw exactly the expected bytes, in both directions. */
    static void assertBytesMatch(JsonNode scenario, String mode) {
        JsonNode bytes = scenario.path("details").path("bytes").path(mode);
        String what = scenario.path("scenario").asString() + " " + mode;
        assertThat(bytes.path("runs").asLong()).as("%s runs", what).isPositive();
        long up = bytes.path("expectedUp").asLong();
        long down = bytes.path("expectedDown").asLong();
        assertThat(up).as("%s expected up", what).isPositive();
        assertThat(down).as("%s expected down", what).isPositive();
        assertThat(bytes.path("clientSent").asLong()).as("%s client sent", what).isEqualTo(up);
        assertThat(bytes.path("targetReceived").asLong()).as("%s target received", what).isEqualTo(up);
        assertThat(bytes.path("targetSent").asLong()).as("%s target sent", what).isEqualTo(down);
        assertThat(bytes.path("clientReceived").asLong()).as("%s client received", what).isEqualTo(down);
    }
}
