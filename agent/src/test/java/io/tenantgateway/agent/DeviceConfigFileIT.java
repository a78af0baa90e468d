package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 31: a bad {@code --device-config} file ends {@code bin/tenant-gateway run} (as the image starts it) with exit
 * 2 and one line naming the file, the key and the range, or the size limit: 2^63 was a Jackson overflow (exit 70,
 * stack trace) and a 20 MB file filled the heap.
 */
@Timeout(120)
class DeviceConfigFileIT extends AgentProcessTestBase {

    private List<String> runWith(Path deviceConfig) throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = testbed.webhookArgs(TunnelTestbed.freePort());
        args.add("--device-config=" + deviceConfig);
        agent = AgentProcess.launch(args);
        assertThat(agent.awaitExit(Duration.ofSeconds(60))).as("exit code; log:%n%s", String.join("\n", agent.log))
                .isEqualTo(2);
        assertThat(agent.log).as("no stack trace").noneMatch(line -> line.startsWith("\tat ")
                || line.contains("Exception"));
        return agent.lines("error: ");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nvidia:\\n  deviceMemoryScaling: 9223372036854775808 | nvidia.deviceMemoryScaling: 9223372036854775808"
            + " (expected: > 0 and <= 100)",
        "vnpus:\\n- commonWord: Ascend910B4\\n  templates:\\n  - {name: vir05_1c_8g, memory: 9223372036854775808}"
            + " | vnpus[0].templates[0].memory: 9223372036854775808 (expected: 0..9223372036854775807)",
    })
    void aNumberPastItsRangeIsOneLineNamingTheKeyAndTheRange(String yaml, String error) throws Exception {
        Path file = Files.writeString(dir.resolve("device-config.yaml"), yaml.replace("\\n", "\n"),
                StandardCharsets.UTF_8);
        assertThat(runWith(file)).containsExactly("error: --device-config " + file + ": " + error);
    }

    @Test
    void aTwentyMegabyteFileIsRefusedNamingTheLimit() throws Exception {
        Path file = dir.resolve("device-config.yaml");
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            out.write("nvidia:\n  resourceCountName: nvidia.com/gpu\n");
            String comment = "# " + "x".repeat(1000) + "\n";
            while (Files.size(file) < 20_000_000) {
                for (int i = 0; i < 1000; i++) {
                    out.write(comment);
                }
                out.flush();
            }
        }
        assertThat(runWith(file)).containsExactly("error: --device-config " + file + ": " + Files.size(file)
                + " bytes (expected: at most 1048576 bytes, 1 MiB: the most a Kubernetes ConfigMap holds)");
    }
}
