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
    void readsEveryVendorBlockOfTheChartsConfigMapAndIgnoresUnknownKeys() throws IOException {
        DeviceConfig config = DeviceConfig.parse(chartConfigMap(), "hami-scheduler-device.yaml");

        assertThat(config.nvidia()).isEqualTo(NvidiaConfig.defaults());
        assertThat(config.block("cambricon").name("resourceCountName")).isEqualTo("cambricon.com/vmlu");
        assertThat(config.block("hygon").name("resourceCoreName")).isEqualTo("hygon.com/dcucores");
        assertThat(config.block("mthreads")).as("absent block: empty names, as in HAMi").isEqualTo(VendorBlock.EMPTY);
        assertThat(config.vnpus()).extracting(AscendChip::commonWord).containsExactly("Ascend910B4");
        assertThat(config.vnpus().get(0).resourceMemoryName()).isEqualTo("huawei.com/Ascend910B4-memory");
        assertThat(config.vnpus().get(0).memoryAllocatable()).isEqualTo(32768);
        assertThat(config.iluvatars()).isEmpty();
    }

    @Test
    void noFileMeansHamisChartForEveryVendor() {
        DeviceConfig defaults = DeviceConfig.defaults();
        DeviceConfig.CHART_BLOCKS.forEach((block, names) -> assertThat(defaults.block(block).values())
                .as(block).isEqualTo(names));
        assertThat(defaults.vnpus()).extracting(AscendChip::commonWord).containsExactly("Ascend910A", "Ascend910B2",
                "Ascend910B3", "Ascend910B4-1", "Ascend910B4", "Ascend310P", "Ascend910C");
        assertThat(defaults.vnpus().get(5).chipName()).isEqualTo("310P3");
        assertThat(defaults.vnpus().get(5).templates()).extracting(AscendChip.Template::memory)
                .containsExactly(3072L, 6144L, 12288L);
        assertThat(defaults.iluvatars()).extracting(IluvatarChip::resourceCountName).containsExactly(
                "iluvatar.ai/MR-V100-vgpu", "iluvatar.ai/MR-V50-vgpu", "iluvatar.ai/BI-V150-vgpu",
                "iluvatar.ai/BI-V100-vgpu");
        assertThat(defaults.iluvatars().get(0).resourceMemoryName()).isEqualTo("iluvatar.ai/MR-V100.vMem");
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
        assertThat(config.block("metax").name("resourceCountName")).isEqualTo("metax-tech.com/gpu");
        assertThat(config.block("metax").name("resourceVCountName")).as("missing key: empty").isEmpty();
        assertThat(config.block("mthreads")).isEqualTo(VendorBlock.EMPTY);
        assertThat(config.block("kunlun")).isEqualTo(VendorBlock.EMPTY);
        assertThat(config.iluvatars()).containsExactly(new IluvatarChip("MR-V100", "", "iluvatar.ai/MR-V100-vgpu",
                "", ""));
        assertThat(config.vnpus()).hasSize(1);
        assertThat(config.vnpus().get(0).templates()).containsExactly(new AscendChip.Template("vir05_1c_8g", 8192));
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
        assertThat(DeviceConfig.parse("cambricon: {}\n", "no-nvidia").nvidia()).isEqualTo(NvidiaConfig.defaults());
        DeviceConfig cambriconOnly = DeviceConfig.parse("cambricon: {resourceCountName: x}\n", "no-nvidia");
        assertThat(cambriconOnly.nvidia()).isEqualTo(NvidiaConfig.defaults());
        assertThat(cambriconOnly.block("cambricon").name("resourceCountName")).isEqualTo("x");
        assertThat(cambriconOnly.block("hygon")).as("a file without the block: HAMi's empty names")
                .isEqualTo(VendorBlock.EMPTY);
        assertThat(cambriconOnly.vnpus()).isEmpty();
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
        assertThatThrownBy(() -> DeviceConfig.parse("vnpus:\n  configs: {a: 1}\n", "dc.yaml"))
                .hasMessage("dc.yaml: vnpus.configs: an object (expected: a list)");
        assertThatThrownBy(() -> DeviceConfig.parse("vnpus:\n- memoryAllocatable: lots\n", "dc.yaml"))
                .hasMessage("dc.yaml: vnpus[0].memoryAllocatable: 'lots' (expected: a whole number)");
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

    @Test
    void loadNvidiaReadsOnlyTheNvidiaBlockOfAFileOrConfigMap(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("device-config.yaml"), "nvidia:\n  deviceSplitCount: 7\n"
                + "vnpus: not-a-list\n", StandardCharsets.UTF_8);
        assertThat(DeviceConfig.loadNvidia(file).deviceSplitCount()).isEqualTo(7);
        assertThatThrownBy(() -> DeviceConfig.load(file)).as("the whole file still checks every block")
                .hasMessageContaining("vnpus");
        Path configMap = Files.writeString(dir.resolve("cm.yaml"), "kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                + "    nvidia:\n      deviceSplitCount: 3\n", StandardCharsets.UTF_8);
        assertThat(DeviceConfig.loadNvidia(configMap).deviceSplitCount()).isEqualTo(3);
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "nvidia:\n  deviceSplitCount: many\n",
                StandardCharsets.UTF_8);
        assertThatThrownBy(() -> DeviceConfig.loadNvidia(bad)).hasMessageStartingWith(bad.toString());
        assertThat(DeviceConfig.loadNvidia(Files.writeString(dir.resolve("empty.yaml"), "")).deviceSplitCount())
                .isEqualTo(NvidiaConfig.defaults().deviceSplitCount());
    }
}
