package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.JarProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * The smoke run users do after an install: the built jar's {@code bench --quick --json}. Checks that the report
 * is complete and that every byte arrived (no speed assertions: figures depend on the machine).
 */
@Timeout(180)
class BenchQuickIT {
    @Test
    void quickJsonRunCoversEveryScenarioAndEveryByteArrives() throws Exception {
        JarProcess.Result result = JarProcess.run("bench", "--quick", "--json");
        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.err()).isZero();
        JsonNode report = BenchJson.parse(result.out());

        assertThat(report.path("quick").asBoolean()).isTrue();
        assertThat(report.path("cores").asInt()).isPositive();
        assertThat(report.path("server").asString()).startsWith("in-process");
        // The shaded jar carries netty-tcnative for linux-x86_64 (the only platform the image is built for).
        assertThat(report.path("tunnelTls").asString()).startsWith("BoringSSL");
        assertThat(BenchJson.scenarioNames(report)).containsExactly("bulk", "parallel", "dial", "scale",
                "isolation", "admission", "footprint");
        report.path("scenarios").forEach(BenchJson::assertComplete);

        for (String name : new String[] {"bulk", "parallel"}) {
            JsonNode scenario = BenchJson.scenario(report, name);
            BenchJson.assertBytesMatch(scenario, "direct");
            BenchJson.assertBytesMatch(scenario, "tunnel");
            JsonNode tunnel = scenario.path("details").path("bytes").path("tunnel");
            long perRun = scenario.path("details").path("connections").asLong()
                    * scenario.path("details").path("bytesEachWayPerConnection").asLong();
            assertThat(tunnel.path("expectedUp").asLong()).isEqualTo(perRun * tunnel.path("runs").asLong());
        }

        JsonNode isolation = BenchJson.scenario(report, "isolation");
        BenchJson.assertBytesMatch(isolation, "tunnel");
        assertThat(isolation.path("details").path("stalledTargetReceived").asLong()).isZero();
        assertThat(isolation.path("details").path("aSentBeforeStall").asLong()).isPositive();

        JsonNode dial = BenchJson.scenario(report, "dial").path("details");
        long dialsPerRun = dial.path("dialsPerRun").asLong();
        assertThat(dial.path("echoes").path("tunnel").asLong()).isGreaterThanOrEqualTo(dialsPerRun)
                .isEqualTo(dial.path("echoes").path("direct").asLong());
        assertThat(dial.path("targetAccepted").asLong()).isEqualTo(dial.path("echoes").path("tunnel").asLong()
                + dial.path("echoes").path("direct").asLong());

        JsonNode scale = BenchJson.scenario(report, "scale");
        JsonNode open = scale.path("figures").findParents("name").stream()
                .filter(f -> f.path("name").asString().equals("tunnels open")).findFirst().orElseThrow();
        assertThat(open.path("met").asBoolean()).isTrue();
        scale.path("details").path("steps").properties().forEach(step -> {
            assertThat(step.getValue().path("agentTunnels").asInt()).isEqualTo(Integer.parseInt(step.getKey()));
            assertThat(step.getValue().path("bareSockets").asInt()).isEqualTo(Integer.parseInt(step.getKey()));
        });

        JsonNode admission = BenchJson.scenario(report, "admission").path("details").path("requests");
        for (String mode : new String[] {"direct", "tunnel"}) {
            assertThat(admission.path(mode).path("requests").asLong()).as("%s admissions", mode).isPositive()
                    .isEqualTo(admission.path(mode).path("allowed").asLong());
        }

        // footprint: the agent started through bin/proxy-agent with the launcher's options, both modes measured
        // from outside (procfs, NMT), next to the bare-JVM floor started with the same options.
        JsonNode footprint = BenchJson.scenario(report, "footprint").path("details");
        for (String mode : new String[] {"pure", "all", "floor"}) {
            JsonNode measured = footprint.path(mode);
            assertThat(measured.path("execToConnectedSeconds").asDouble()).as(mode).isPositive();
            assertThat(measured.path("rssIdleBytes").asLong()).as(mode).isPositive();
            assertThat(measured.path("classesIdle").path("classes").asLong()).as("%s classes: %s", mode,
                    measured.path("classesIdle")).isPositive();
            assertThat(measured.path("rssAfterSecondGiBBytes").asLong()).as(mode).isPositive();
            assertThat(measured.path("nmtAfterLoad").has("error")).as("%s NMT: %s", mode,
                    measured.path("nmtAfterLoad")).isFalse();
            // The launcher's heap follows the parts: 48 MiB for a pure tunnel (and the floor, started with its
            // options), 64 MiB once the webhook is on (agent/REFERENCE.md, "Memory budget").
            assertThat(measured.path("nmtAfterLoad").path("heapReservedKiB").asLong()).as("%s heap bound", mode)
                    .isEqualTo(mode.equals("all") ? 64 * 1024 : 48 * 1024);
        }
        assertThat(footprint.path("all").path("jvmOptions").toString()).contains("-Xmx64m");
        assertThat(footprint.path("pure").path("jvmOptions").toString()).contains("-Xmx48m",
                "-XX:+ExitOnOutOfMemoryError", "-XX:SharedArchiveFile=");
        assertThat(footprint.path("launcher").asString()).endsWith("bin/proxy-agent");
    }

    @Test
    void theTableNamesEveryFigureAndWhatLimitsIt() throws Exception {
        JarProcess.Result result = JarProcess.run("bench", "--quick", "--scenario", "dial", "--repeats", "1",
                "--warmups", "0");
        assertThat(result.exitCode()).as("exit code; stderr:%n%s", result.err()).isZero();
        assertThat(result.out()).contains("SCENARIO").contains("dial        p99 dial+echo+close (ms)")
                .contains("What limits each figure:").doesNotContain("bulk ");
    }
}
