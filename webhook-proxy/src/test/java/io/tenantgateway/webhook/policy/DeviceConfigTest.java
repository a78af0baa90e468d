package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeviceConfigTest {

    static String chartConfigMap() throws IOException {
        try (InputStream in = DeviceConfigTest.class.getResourceAsStream("hami-scheduler-device.yaml")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void readsTheChartsConfigMapAndIgnoresOtherVendorsAndUnknownKeys() throws IOException {
        DeviceConfig config = DeviceConfig.parse(chartConfigMap(), "hami-scheduler-device.yaml");

        assertThat(config.nvidia()).isEqualTo(NvidiaConfig.defaults());
        assertThat(config.otherVendors()).as("read, named, not implemented").containsExactly("cambricon", "hygon",
                "vnpus");
    }

    @Test
    void everyVendorBlockOfHamisChartReadsWithoutFailing() {
        // The shapes HAMi's chart writes for its other vendors: mappings, lists of mappings, nested lists.
        DeviceConfig config = DeviceConfig.parse("""
                nvidia:
                  resourceCountName: nvidia.com/vgpu
                  knownMigGeometries: [{models: ["A30"], allowedGeometries: [[{name: 1g.6gb, memory: 6144, count: 4}]]}]
                  libCudaLogLevel: 1
                metax:
                  resourceCountName: "metax-tech.com/gpu"
                  sgpuTopologyAware: true
                mthreads:
                  memoryPerCard: [96]
                iluvatars:
                - chipName: MR-V100
                  resourceCountName: iluvatar.ai/MR-V100-vgpu
                kunlun: {}
                vnpus:
                  hamiVnpuCore: false
                  configs:
                  - chipName: 910B4
                    templates: [{name: vir05_1c_8g, memory: 8192, aiCore: 5}]
                """, "device-config.yaml");

        assertThat(config.nvidia().resourceCountName()).isEqualTo("nvidia.com/vgpu");
        assertThat(config.otherVendors()).as("empty blocks configure nothing").containsExactly("metax", "mthreads",
                "iluvatars", "vnpus");
        assertThat(DeviceConfig.parse("nvidia: {}\n", "x").otherVendors()).isEmpty();
    }

    @Test
    void readsTheBareDeviceConfigFile(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("device-config.yaml"), """
                nvidia:
                  resourceCountName: nvidia.com/gpu
                  overwriteEnv: true
                  defaultGPUNum: 2
                  memoryFactor: 4
                  gpuCorePolicy: disable
                  runtimeClassName: nvidia
                  deviceMemoryScaling: 1.5
                """);

        NvidiaConfig nvidia = DeviceConfig.load(file).nvidia();

        assertThat(nvidia.overwriteEnv()).isTrue();
        assertThat(nvidia.defaultGpuNum()).isEqualTo(2);
        assertThat(nvidia.memoryFactor()).isEqualTo(4);
        assertThat(nvidia.gpuCorePolicy()).isEqualTo("disable");
        assertThat(nvidia.runtimeClassName()).isEqualTo("nvidia");
        assertThat(nvidia.deviceMemoryScaling()).isEqualTo(1.5);
        assertThat(nvidia.resourceMemoryName()).as("missing keys get HAMi's defaults").isEqualTo("nvidia.com/gpumem");
    }

    @Test
    void emptyFileMeansDefaults() {
        assertThat(DeviceConfig.parse("", "empty")).isEqualTo(DeviceConfig.defaults());
        assertThat(DeviceConfig.parse("cambricon: {}\n", "no-nvidia")).isEqualTo(DeviceConfig.defaults());
        assertThat(DeviceConfig.parse("cambricon: {resourceCountName: x}\n", "no-nvidia").nvidia())
                .isEqualTo(NvidiaConfig.defaults());
    }

    @Test
    void badValuesNameTheFileTheKeyAndWhatWasExpected() {
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia:\n  defaultGPUNum: two\n", "dc.yaml"))
                .hasMessage("dc.yaml: nvidia.defaultGPUNum: 'two' (expected: a whole number)");
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia:\n  overwriteEnv: yes please\n", "dc.yaml"))
                .hasMessage("dc.yaml: nvidia.overwriteEnv: 'yes please' (expected: true or false)");
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia:\n  defaultGPUNum: -1\n", "dc.yaml"))
                .hasMessage("dc.yaml: nvidia.defaultGPUNum: -1 (expected: >= 0)");
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia:\n  gpuCorePolicy: turbo\n", "dc.yaml"))
                .hasMessage("dc.yaml: nvidia.gpuCorePolicy: 'turbo' (expected: default, force or disable)");
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia: [1, 2]\n", "dc.yaml"))
                .hasMessage("dc.yaml: nvidia: an array (expected: a mapping)");
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia: {\n", "dc.yaml"))
                .hasMessageStartingWith("dc.yaml: not valid YAML: ");
        assertThatThrownBy(() -> DeviceConfig.parse("kind: ConfigMap\ndata: {}\n", "cm.yaml"))
                .hasMessage("cm.yaml: ConfigMap has no data.device-config.yaml (expected: HAMi's"
                        + " hami-scheduler-device ConfigMap)");
    }

    @Test
    void missingFileIsNamed(@TempDir Path dir) {
        assertThatThrownBy(() -> DeviceConfig.load(dir.resolve("nope.yaml")))
                .hasMessage("--device-config: " + dir.resolve("nope.yaml") + " does not exist (expected: HAMi's"
                        + " device-config.yaml)");
    }
}
