package io.tenantgateway.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

@Timeout(60)
class BenchCommandTest {
    private static BenchConfig parse(String... args) {
        BenchCommand command = new BenchCommand();
        new CommandLine(command).parseArgs(args);
        return command.toConfig();
    }

    @Test
    void defaultsRunEveryScenarioAtFullSize() {
        BenchConfig config = parse();
        assertThat(config.scenarios()).isEqualTo(EnumSet.allOf(Scenario.class));
        assertThat(config.quick()).isFalse();
        assertThat(config.sizes()).isEqualTo(BenchSizes.full());
        assertThat(config.sizes().bulkBytes()).isEqualTo(256L * 1024 * 1024);
        assertThat(config.sizes().scaleSteps()).containsExactly(1_000, 5_000, 10_000);
        assertThat(config.external()).isNull();
        assertThat(config.agentMaxDataSize()).isZero();
        assertThat(parse("--agent-max-data-size", "262144").agentMaxDataSize()).isEqualTo(262144);
    }

    @Test
    void scenariosAreSelectedByNameRepeatedOrCommaSeparated() {
        assertThat(parse("--scenario", "bulk,dial", "--scenario", "ADMISSION").scenarios())
                .containsExactlyInAnyOrder(Scenario.BULK, Scenario.DIAL, Scenario.ADMISSION);
        assertThatThrownBy(() -> parse("--scenario", "bulk,warp")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--scenario: warp (expected: one of bulk, parallel, dial, scale, isolation, admission,"
                        + " footprint)");
    }

    @Test
    void quickIsSmallAndRepeatsCanBeOverridden() {
        BenchConfig config = parse("--quick", "--repeats", "2", "--warmups", "0");
        assertThat(config.quick()).isTrue();
        assertThat(config.sizes().bulkBytes()).isLessThan(BenchSizes.full().bulkBytes());
        assertThat(config.sizes().repeats()).isEqualTo(2);
        assertThat(config.sizes().warmups()).isZero();
        assertThatThrownBy(() -> parse("--repeats", "0")).hasMessage("--repeats: 0 (expected: > 0)");
    }

    @Test
    void anExternalServerNeedsItsCaAndExactlyOneFrontend() {
        BenchConfig config = parse("--server", "127.0.0.1:8132", "--ca-cert", "/ca.crt", "--agent-cert", "/a.crt",
                "--agent-key", "/a.key", "--frontend-uds", "/run/konnectivity.socket");
        assertThat(config.external().host()).isEqualTo("127.0.0.1");
        assertThat(config.external().port()).isEqualTo(8132);
        assertThat(config.external().frontendUds()).isEqualTo(Path.of("/run/konnectivity.socket"));
        assertThat(config.external().describe()).contains("mTLS").contains("unix:/run/konnectivity.socket");

        assertThatThrownBy(() -> parse("--server", "127.0.0.1:8132", "--frontend-uds", "/s"))
                .hasMessageStartingWith("--ca-cert: not set");
        assertThatThrownBy(() -> parse("--server", "127.0.0.1:8132", "--ca-cert", "/ca"))
                .hasMessageStartingWith("frontend: none");
        assertThatThrownBy(() -> parse("--server", "127.0.0.1:8132", "--ca-cert", "/ca", "--frontend",
                "127.0.0.1:8090")).hasMessageContaining("missing --frontend-cert");
        assertThatThrownBy(() -> parse("--server", "127.0.0.1", "--ca-cert", "/ca"))
                .hasMessage("--server: 127.0.0.1 (expected: HOST:PORT)");
        assertThatThrownBy(() -> parse("--server", "127.0.0.1:0", "--ca-cert", "/ca"))
                .hasMessage("--server: port 0 (expected: 1..65535)");
        assertThatThrownBy(() -> parse("--ca-cert", "/ca")).hasMessageContaining("without --server");
    }
}
