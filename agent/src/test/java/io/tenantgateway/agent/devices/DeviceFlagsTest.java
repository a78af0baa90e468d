package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.hami.DeviceConfigFile;
import io.tenantgateway.common.config.ConfigException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code --mock-devices} next to {@code --mock-gpus} and {@code --mock-inventory}, parsed as {@code run} parses them. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceFlagsTest {

    @Command(name = "run")
    static final class Run {
        @Mixin
        DeviceFlags flags;
    }

    private static DeviceRegistrationConfig config(String... args) {
        Run run = new Run();
        new CommandLine(run).parseArgs(args);
        return run.flags.config(Optional.of("worker-1"), DeviceConfigFile.of(Optional.empty())).orElseThrow();
    }

    @Test
    void mockDevicesChoosesEveryVendorsPresetsPerNode() {
        DeviceRegistrationConfig config = config("--device-source=mock",
                "--mock-devices=Ascend910B4:2,DCU-K100:1,A100-80GB:1");

        assertThat(config.source()).isEqualTo(DeviceRegistrationConfig.Source.MOCK);
        assertThat(config.advertiseCapacity()).isTrue();
        assertThat(config.mockInventory()).isEqualTo(MockInventory.parseDevices("Ascend910B4:2,DCU-K100,A100-80GB"));
        assertThat(DeviceRegistrar.simulatedVendors(config)).extracting(v -> v.vendor().displayName())
                .containsExactly("Ascend910B4", "Hygon");
    }

    @Test
    void mockGpusKeepsItsMeaning() {
        assertThat(config("--device-source=mock", "--mock-gpus=L4-24GB:2").mockInventory())
                .isEqualTo(MockInventory.of(GpuPreset.L4_24GB, 2));
        assertThatThrownBy(() -> config("--device-source=mock", "--mock-gpus=DCU-K100"))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("--mock-gpus: DCU-K100 (expected: an"
                        + " NVIDIA preset");
    }

    @Test
    void mockGpusAndMockDevicesAddUpGpusFirst() {
        // As the chart passes devices.mock.gpus and devices.mock.devices (components/mock-devices too).
        assertThat(config("--device-source=mock", "--mock-gpus=A100-80GB", "--mock-devices=Ascend910B4:2,L4-24GB")
                .mockInventory()).isEqualTo(MockInventory.parseDevices("A100-80GB,Ascend910B4:2,L4-24GB"));
    }

    @Test
    void anInventoryFileStandsAlone() {
        assertThatThrownBy(() -> config("--device-source=mock", "--mock-inventory=/nonexistent.yaml",
                "--mock-devices=Ascend910B4")).isInstanceOf(ConfigException.class)
                .hasMessage("--mock-inventory and --mock-devices: both given (expected: one of them)");
        assertThatThrownBy(() -> config("--device-source=mock")).isInstanceOf(ConfigException.class)
                .hasMessage("--device-source: mock without an inventory (expected: --mock-gpus such as A100-80GB or"
                        + " L4-24GB:2, --mock-devices such as Ascend910B4:2,DCU-K100, or --mock-inventory FILE)");
    }
}
