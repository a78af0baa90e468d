package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.hami.DeviceConfigFile;
import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
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
        return config(DeviceConfigFile.of(Optional.empty()), args);
    }

    private static DeviceRegistrationConfig config(DeviceConfigFile deviceConfig, String... args) {
        Run run = new Run();
        new CommandLine(run).parseArgs(args);
        return run.flags.config(Optional.of("worker-1"), deviceConfig).orElseThrow();
    }

    @Test
    void reportNodeCapacityIsOffByDefaultAndReadsAsTheOtherBooleans() {
        assertThat(config("--device-source=mock", "--mock-gpus=A100-80GB").nodeCapacity()).isNull();
        assertThat(config("--device-source=mock", "--mock-gpus=A100-80GB", "--report-node-capacity=false")
                .nodeCapacity()).isNull();
        NodeCapacityReport hami = new NodeCapacityReport("nvidia.com/gpumem", "nvidia.com/gpucores");
        assertThat(config("--device-source=mock", "--mock-gpus=A100-80GB", "--report-node-capacity").nodeCapacity())
                .isEqualTo(hami);
        assertThat(config("--device-source=nvidia-smi", "--report-node-capacity=true").nodeCapacity())
                .isEqualTo(hami);
    }

    @Test
    void reportNodeCapacityFollowsTheDeviceConfigsResourceNames(@TempDir Path dir) throws IOException {
        Path renamed = Files.writeString(dir.resolve("device-config.yaml"), "nvidia:\n"
                + "  resourceMemoryName: example.com/vram\n  resourceCoreName: example.com/vcores\n");
        assertThat(config(DeviceConfigFile.of(Optional.of(renamed)), "--device-source=mock", "--mock-gpus=L4-24GB",
                "--report-node-capacity").nodeCapacity())
                .isEqualTo(new NodeCapacityReport("example.com/vram", "example.com/vcores"));

        Path noCores = Files.writeString(dir.resolve("no-cores.yaml"), "nvidia:\n  resourceCoreName: \"\"\n");
        assertThat(config(DeviceConfigFile.of(Optional.of(noCores)), "--device-source=mock", "--mock-gpus=L4-24GB",
                "--report-node-capacity").nodeCapacity().resources()).containsExactly("nvidia.com/gpumem");
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
