package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Timeout(10)
class LabReportFormatTest {
    private static final LabReport.Endpoints TENANT_A = new LabReport.Endpoints("tenant-a", "http://127.0.0.1:1/",
            "/tmp/lab/tenant-a/kubeconfig", "127.0.0.1:2", "token auth", "uds /tmp/lab/tenant-a/k.socket",
            "tenant-gateway-webhook.kube-system.svc = 127.0.0.1:3", "worker-a", "http://127.0.0.1:4/ui",
            "http://127.0.0.1:5/metrics", "http://127.0.0.1:5/readyz?verbose");

    private static LabReport report(boolean secondPasses, Set<Breakage> broken) {
        return new LabReport(List.of(
                new CheckResult(1, "control planes up, agents connected", true, Duration.ofMillis(12), "all up"),
                new CheckResult(5, "node lock: back-to-back binds", secondPasses, Duration.ofMillis(4321),
                        secondPasses ? "held 80 ms" : "second bind refused: node worker-b has been locked")),
                Duration.ofMillis(9876), List.of(TENANT_A), broken);
    }

    @Test
    void tableHasARowPerCheckWithResultTimeAndEvidenceAndLabelsTheSimulator() {
        String table = LabReportFormat.table(report(false, Set.of(Breakage.DEVICE_PLUGIN)));

        assertThat(table).contains(Lab.SCHEDULER);
        assertThat(table.lines().filter(line -> line.matches(" [0-9]  .*")).toList()).containsExactly(
                " 1  control planes up, agents connected  PASS       12 ms  all up",
                " 5  node lock: back-to-back binds        FAIL       4.3 s  second bind refused: node worker-b has"
                        + " been locked");
        assertThat(table).endsWith("1 of 2 checks passed in 9.9 s (broken on purpose: device-plugin)\n");
    }

    @Test
    void jsonCarriesTheVerdictEveryCheckAndTheEndpoints() {
        JsonNode json = JsonMapper.builder().build().readTree(LabReportFormat.json(report(true, Set.of())));

        assertThat(json.path("passed").asBoolean()).isTrue();
        assertThat(json.path("passedCount").asInt()).isEqualTo(2);
        assertThat(json.path("wallMillis").asLong()).isEqualTo(9876);
        assertThat(json.path("scheduler").asString()).contains("SIMULATOR");
        assertThat(json.path("checks").get(1).path("number").asInt()).isEqualTo(5);
        assertThat(json.path("checks").get(1).path("result").asString()).isEqualTo("PASS");
        assertThat(json.path("checks").get(1).path("millis").asLong()).isEqualTo(4321);
        assertThat(json.path("checks").get(1).path("evidence").asString()).isEqualTo("held 80 ms");
        assertThat(json.path("tenants").get(0).path("statusPage").asString()).isEqualTo("http://127.0.0.1:4/ui");
    }

    @Test
    void aReportPassesOnlyWhenEveryCheckThatRanPassed() {
        assertThat(report(true, Set.of()).passed()).isTrue();
        assertThat(report(false, Set.of()).passed()).isFalse();
        assertThat(new LabReport(List.of(), Duration.ZERO, List.of(), Set.of()).passed()).isFalse();
        assertThat(LabReportFormat.endpoints(report(true, Set.of())))
                .contains("kubectl --kubeconfig /tmp/lab/tenant-a/kubeconfig get nodes,pods -A",
                        "status page      http://127.0.0.1:4/ui  (agent worker-a)");
    }
}
