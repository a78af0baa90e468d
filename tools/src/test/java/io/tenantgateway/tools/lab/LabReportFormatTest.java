package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Timeout(60)
class LabReportFormatTest {
    private static final LabReport.Endpoints TENANT_A = new LabReport.Endpoints("tenant-a", "http://127.0.0.1:1/",
            "/tmp/lab/tenant-a/kubeconfig", "127.0.0.1:2", "token auth", "uds /tmp/lab/tenant-a/k.socket",
            "tenant-gateway-webhook.kube-system.svc = 127.0.0.1:3", List.of(
                    new LabReport.AgentEndpoints("worker-a", "http://127.0.0.1:4/ui", "http://127.0.0.1:5/metrics",
                            "http://127.0.0.1:5/readyz?verbose", "bin/tenant-gateway doctor --node-name=worker-a"),
                    new LabReport.AgentEndpoints("worker-a2", "http://127.0.0.1:6/ui", "http://127.0.0.1:7/metrics",
                            "http://127.0.0.1:7/readyz?verbose", "bin/tenant-gateway doctor --node-name=worker-a2")));
    private static final List<LabReport.Device> DEVICES = List.of(
            new LabReport.Device("tenant-a", "worker-a", "NVIDIA", "hami.io/node-nvidia-register",
                    "GPU-1096109f-1111-2222-3333-444455556666", 0, "NVIDIA A100-SXM4-80GB", 81920, 100, 10, true),
            new LabReport.Device("tenant-a", "worker-a2", "Ascend", "hami.io/node-register-Ascend910B4",
                    "1A2B3C4D-00000000-11111111-22222222-33333333", 1, "Ascend910B4", 32768, 20, 4, false),
            new LabReport.Device("tenant-a", "worker-a2", "Hygon", "hami.io/node-dcu-register", "DCU-0123456789ABCDEF",
                    0, "DCU-K100", 65536, 100, 4, true));

    private static LabReport report(boolean secondPasses, Set<Breakage> broken) {
        return new LabReport(List.of(
                new CheckResult(1, "control planes up, agents connected", true, Duration.ofMillis(12), "all up"),
                new CheckResult(5, "node lock: back-to-back binds", secondPasses, Duration.ofMillis(4321),
                        secondPasses ? "held 80 ms" : "second bind refused: node worker-b has been locked")),
                Duration.ofMillis(9876), List.of(TENANT_A), broken, DEVICES);
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
    void tableListsEveryRegisteredDeviceWithItsVendor() {
        String table = LabReportFormat.table(report(true, Set.of()));

        assertThat(table.lines().dropWhile(line -> !line.startsWith("devices registered")).skip(1)
                .takeWhile(line -> !line.isEmpty()).toList()).containsExactly(
                "  node       vendor  device           type                       memory  cores  split",
                "  worker-a   NVIDIA  #0 GPU-1096109f  NVIDIA A100-SXM4-80GB   81920 MiB    100     10",
                "  worker-a2  Ascend  #1 1A2B3C4D-000  Ascend910B4             32768 MiB     20      4  unhealthy",
                "  worker-a2  Hygon   #0 DCU-01234567  DCU-K100                65536 MiB    100      4");
        assertThat(LabReportFormat.table(new LabReport(report(true, Set.of()).checks(), Duration.ZERO,
                List.of(TENANT_A), Set.of()))).doesNotContain("devices registered");
    }

    @Test
    void jsonCarriesEveryDeviceWithItsVendorAndEveryAgent() {
        JsonNode json = JsonMapper.builder().build().readTree(LabReportFormat.json(report(true, Set.of())));

        JsonNode devices = json.path("devices");
        assertThat(devices.size()).isEqualTo(3);
        assertThat(devices.get(1).path("vendor").asString()).isEqualTo("Ascend");
        assertThat(devices.get(1).path("type").asString()).isEqualTo("Ascend910B4");
        assertThat(devices.get(1).path("registerKey").asString()).isEqualTo("hami.io/node-register-Ascend910B4");
        assertThat(devices.get(1).path("id").asString()).isEqualTo("1A2B3C4D-00000000-11111111-22222222-33333333");
        assertThat(devices.get(1).path("node").asString()).isEqualTo("worker-a2");
        assertThat(devices.get(1).path("index").asLong()).isEqualTo(1);
        assertThat(devices.get(1).path("memoryMiB").asInt()).isEqualTo(32768);
        assertThat(devices.get(1).path("cores").asInt()).isEqualTo(20);
        assertThat(devices.get(1).path("split").asInt()).isEqualTo(4);
        assertThat(devices.get(1).path("healthy").asBoolean()).isFalse();
        assertThat(devices.get(2).path("vendor").asString()).isEqualTo("Hygon");
        JsonNode tenant = json.path("tenants").get(0);
        assertThat(tenant.path("agent").asString()).isEqualTo("worker-a");
        assertThat(tenant.path("agents").size()).isEqualTo(2);
        assertThat(tenant.path("agents").get(1).path("node").asString()).isEqualTo("worker-a2");
        assertThat(tenant.path("agents").get(1).path("statusPage").asString()).isEqualTo("http://127.0.0.1:6/ui");
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
        assertThat(json.path("tenants").get(0).path("doctor").asString())
                .isEqualTo("bin/tenant-gateway doctor --node-name=worker-a");
    }

    @Test
    void aReportPassesOnlyWhenEveryCheckThatRanPassed() {
        assertThat(report(true, Set.of()).passed()).isTrue();
        assertThat(report(false, Set.of()).passed()).isFalse();
        assertThat(new LabReport(List.of(), Duration.ZERO, List.of(), Set.of()).passed()).isFalse();
        assertThat(LabReportFormat.endpoints(report(true, Set.of())))
                .contains("kubectl --kubeconfig /tmp/lab/tenant-a/kubeconfig get nodes,pods -A",
                        "status page      http://127.0.0.1:4/ui  (agent worker-a)",
                        "status page      http://127.0.0.1:6/ui  (agent worker-a2)",
                        "readiness        http://127.0.0.1:7/readyz?verbose",
                        "doctor           bin/tenant-gateway doctor --node-name=worker-a2");
    }

    @Test
    void aKamajiStyleWorkersTwoAgentsAreListedWithTheirRoles() {
        LabReport.Endpoints tenant = new LabReport.Endpoints("tenant-a", "http://127.0.0.1:1/",
                "/tmp/lab/tenant-a/kubeconfig", "127.0.0.1:2", "token auth", "uds /tmp/lab/tenant-a/k.socket",
                "tenant-gateway-webhook.kube-system.svc = 127.0.0.1:3", List.of(
                        new LabReport.AgentEndpoints("worker-a", "http://127.0.0.1:4/ui", "http://127.0.0.1:5/metrics",
                                "http://127.0.0.1:5/readyz?verbose", "bin/tenant-gateway doctor --agent-id=worker-a",
                                "tunnel + webhook"),
                        new LabReport.AgentEndpoints("worker-a", "http://127.0.0.1:6/ui", "http://127.0.0.1:7/metrics",
                                "http://127.0.0.1:7/readyz?verbose", "bin/tenant-gateway doctor --tunnel=false",
                                "node role, --tunnel=false")));
        LabReport report = new LabReport(report(true, Set.of()).checks(), Duration.ZERO, List.of(tenant), Set.of());

        assertThat(LabReportFormat.endpoints(report)).contains(
                "status page      http://127.0.0.1:4/ui  (agent worker-a, tunnel + webhook)",
                "status page      http://127.0.0.1:6/ui  (agent worker-a, node role, --tunnel=false)",
                "doctor           bin/tenant-gateway doctor --tunnel=false");
        JsonNode agents = JsonMapper.builder().build().readTree(LabReportFormat.json(report)).path("tenants").get(0)
                .path("agents");
        assertThat(agents.get(0).path("role").asString()).isEqualTo("tunnel + webhook");
        assertThat(agents.get(1).path("role").asString()).isEqualTo("node role, --tunnel=false");
        assertThat(agents.get(1).path("statusPage").asString()).isEqualTo("http://127.0.0.1:6/ui");
        JsonNode single = JsonMapper.builder().build().readTree(LabReportFormat.json(report(true, Set.of())));
        assertThat(single.path("tenants").get(0).path("agents").get(0).has("role")).as("one agent per worker: no role")
                .isFalse();
    }
}
