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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
                .hasMessage("dc.yaml: nvidia.defaultGPUNum: -1 (expected: 0..2147483647)");
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
        assertThatThrownBy(() -> DeviceConfig.loadNvidia(bad)).hasMessage("--device-config " + bad
                + ": nvidia.deviceSplitCount: 'many' (expected: a whole number)");
        assertThat(DeviceConfig.loadNvidia(Files.writeString(dir.resolve("empty.yaml"), "")).deviceSplitCount())
                .isEqualTo(NvidiaConfig.defaults().deviceSplitCount());
    }

    /** Issue 31: a number past its key's range is a config error naming the key and the range, never an overflow. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nvidia:\\n  deviceMemoryScaling: 9223372036854775808 | nvidia.deviceMemoryScaling: 9223372036854775808"
            + " (expected: > 0 and <= 100)",
        "nvidia:\\n  deviceCoreScaling: .inf | nvidia.deviceCoreScaling: Infinity (expected: > 0 and <= 100)",
        "nvidia:\\n  deviceMemoryScaling: 0 | nvidia.deviceMemoryScaling: 0 (expected: > 0 and <= 100)",
        "nvidia:\\n  defaultMemory: 9223372036854775808 | nvidia.defaultMemory: 9223372036854775808"
            + " (expected: 0..2147483647)",
        "nvidia:\\n  deviceSplitCount: 4294967296 | nvidia.deviceSplitCount: 4294967296 (expected: 1..2147483647)",
        "nvidia:\\n  memoryFactor: 2147483648 | nvidia.memoryFactor: 2147483648 (expected: 1..2147483647)",
        "nvidia:\\n  defaultCores: 101 | nvidia.defaultCores: 101 (expected: 0..100)",
        "hygon:\\n  memoryFactor: 99999999999999999999 | hygon.memoryFactor: 99999999999999999999"
            + " (expected: 1..2147483647)",
        "vnpus:\\n- templates:\\n  - memory: 9223372036854775808 | vnpus[0].templates[0].memory: 9223372036854775808"
            + " (expected: 0..9223372036854775807)",
        "vnpus:\\n- memoryAllocatable: -1 | vnpus[0].memoryAllocatable: -1 (expected: 0..9223372036854775807)",
        "vnpus:\\n- memoryFactor: 2147483648 | vnpus[0].memoryFactor: 2147483648 (expected: 0..2147483647)",
    })
    void numbersPastTheirRangeNameTheKeyAndTheRange(String yaml, String message) {
        assertThatThrownBy(() -> DeviceConfig.parse(yaml.replace("\\n", "\n"), "dc.yaml"))
                .isInstanceOfSatisfying(InvalidDeviceConfigException.class, e -> assertThat(e.problem())
                        .isEqualTo(InvalidDeviceConfigException.Problem.INVALID_VALUE))
                .hasMessage("dc.yaml: " + message);
    }

    @Test
    void theLargestValuesInRangeAreRead() {
        DeviceConfig config = DeviceConfig.parse("nvidia:\n  deviceMemoryScaling: 100\n  defaultMemory: 2147483647\n"
                + "vnpus:\n- memoryCapacity: 9223372036854775807\n", "dc.yaml");
        assertThat(config.nvidia().deviceMemoryScaling()).isEqualTo(100.0);
        assertThat(config.nvidia().defaultMemory()).isEqualTo(Integer.MAX_VALUE);
        assertThat(config.vnpus().get(0).memoryCapacity()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aFileOrValueOverOneMebibyteIsRefusedUnparsedNamingTheLimit(@TempDir Path dir) throws IOException {
        Path big = dir.resolve("big.yaml");
        try (var out = Files.newBufferedWriter(big, StandardCharsets.UTF_8)) {
            String line = "# " + "x".repeat(1021) + "\n";
            for (int i = 0; i < 20 * 1024; i++) {
                out.write(line); // 20 MiB of comments: YAML, but never read whole
            }
        }
        assertThatThrownBy(() -> DeviceConfig.load(big))
                .isInstanceOfSatisfying(InvalidDeviceConfigException.class, e -> assertThat(e.problem())
                        .isEqualTo(InvalidDeviceConfigException.Problem.TOO_LARGE))
                .hasMessage("--device-config " + big + ": " + Files.size(big) + " bytes (expected: at most"
                        + " 1048576 bytes, 1 MiB: the most a Kubernetes ConfigMap holds)");
        assertThatThrownBy(() -> DeviceConfig.loadNvidia(big)).hasMessageContaining("at most 1048576 bytes");

        String justOver = "#" + "é".repeat(DeviceConfig.MAX_BYTES / 2); // 1 + 2 bytes each: one byte over
        assertThatThrownBy(() -> DeviceConfig.parse(justOver, "ConfigMap a/b data.device-config.yaml"))
                .hasMessage("ConfigMap a/b data.device-config.yaml: " + (DeviceConfig.MAX_BYTES + 1) + " bytes"
                        + " (expected: at most 1048576 bytes, 1 MiB: the most a Kubernetes ConfigMap holds)");
        assertThat(DeviceConfig.parse("#" + "x".repeat(DeviceConfig.MAX_BYTES - 1), "at the limit"))
                .isEqualTo(DeviceConfig.defaults());
        assertThat(DeviceConfig.utf8Length("a\u00e9\u20ac\ud83d\ude00")).isEqualTo(1 + 2 + 3 + 4);
    }

    @Test
    void chipAndTemplateListsAreCapped() {
        String chips = "vnpus:\n" + "- {}\n".repeat(DeviceConfig.MAX_CHIPS + 1);
        assertThatThrownBy(() -> DeviceConfig.parse(chips, "dc.yaml"))
                .hasMessage("dc.yaml: vnpus: 4097 entries (expected: at most 4096)");
        assertThat(DeviceConfig.parse("vnpus:\n" + "- {}\n".repeat(DeviceConfig.MAX_CHIPS), "dc.yaml").vnpus())
                .hasSize(DeviceConfig.MAX_CHIPS);
        assertThatThrownBy(() -> DeviceConfig.parse("iluvatars:\n" + "- {}\n".repeat(DeviceConfig.MAX_CHIPS + 1),
                "dc.yaml")).hasMessage("dc.yaml: iluvatars: 4097 entries (expected: at most 4096)");
        String templates = "vnpus:\n- templates:\n" + "  - {memory: 1}\n".repeat(DeviceConfig.MAX_TEMPLATES + 1);
        assertThatThrownBy(() -> DeviceConfig.parse(templates, "dc.yaml"))
                .hasMessage("dc.yaml: vnpus[0].templates: 65 entries (expected: at most 64)");
    }

    @Test
    void problemsAreClassifiedForTheRejectionMetric() {
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia: {\n", "dc.yaml"))
                .isInstanceOfSatisfying(InvalidDeviceConfigException.class, e -> assertThat(e.problem().label())
                        .isEqualTo("not_yaml"));
        assertThatThrownBy(() -> DeviceConfig.parse("kind: ConfigMap\ndata: {}\n", "cm.yaml"))
                .isInstanceOfSatisfying(InvalidDeviceConfigException.class, e -> assertThat(e.problem().label())
                        .isEqualTo("no_key"));
        assertThatThrownBy(() -> DeviceConfig.parse("nvidia:\n  gpuCorePolicy: turbo\n", "dc.yaml"))
                .isInstanceOfSatisfying(InvalidDeviceConfigException.class, e -> assertThat(e.problem().label())
                        .isEqualTo("invalid_value"));
    }
}
