package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.HamiDeviceCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MockDeviceSourceTest {
    /**
     * The lab's tenant-a worker: one A100 80 GB. Hand-checked: the UUID is Java's
     * UUID.nameUUIDFromBytes("tenant-a-worker/0") (recomputed independently with Python's
     * hashlib.md5 + RFC 4122 version/variant bits), index 0 and numa 0 are omitted like Go's
     * omitempty, keys in HAMi's order.
     */
    static final String TENANT_A =
            "[{\"id\":\"GPU-8fc6e05d-6a18-3b39-a504-e223549f27fe\",\"count\":10,\"devmem\":81920,\"devcore\":100,"
                    + "\"type\":\"NVIDIA A100-SXM4-80GB\",\"mode\":\"hami-core\",\"health\":true}]";

    /** The lab's tenant-b worker: two L4 24 GB; the second carries "index":1. */
    static final String TENANT_B =
            "[{\"id\":\"GPU-5395fb89-59cd-3730-a761-d85fa0cf3ec0\",\"count\":10,\"devmem\":23034,\"devcore\":100,"
                    + "\"type\":\"NVIDIA L4\",\"mode\":\"hami-core\",\"health\":true},"
                    + "{\"id\":\"GPU-43b46f9d-c8c2-30f0-a30c-6be2e8a52119\",\"index\":1,\"count\":10,\"devmem\":23034,"
                    + "\"devcore\":100,\"type\":\"NVIDIA L4\",\"mode\":\"hami-core\",\"health\":true}]";

    @Test
    void labInventoriesEncodeToTheHandCheckedAnnotationsAndDecodeBack() {
        List<GpuDevice> tenantA = new MockDeviceSource("tenant-a-worker",
                MockInventory.parseShorthand("A100-80GB"), 10).discover();
        List<GpuDevice> tenantB = new MockDeviceSource("tenant-b-worker",
                MockInventory.parseShorthand("L4-24GB:2"), 10).discover();

        assertThat(HamiDeviceCodec.encode(tenantA)).isEqualTo(TENANT_A);
        assertThat(HamiDeviceCodec.encode(tenantB)).isEqualTo(TENANT_B);
        assertThat(HamiDeviceCodec.decode(TENANT_A)).isEqualTo(tenantA);
        assertThat(HamiDeviceCodec.decode(TENANT_B)).isEqualTo(tenantB);
    }

    @ParameterizedTest(name = "{0}: {1}, {2} MiB")
    @CsvSource({
        "A100-80GB,  NVIDIA A100-SXM4-80GB, 81920",
        "l4-24gb,    NVIDIA L4,             23034",
        "H100-80GB,  NVIDIA H100 80GB HBM3, 81559",
        "H200-141GB, NVIDIA H200,           143771"})
    void presetsCarryTheFiguresNvidiaSmiReports(String preset, String modelName, int memoryMiB) {
        assertThat(GpuPreset.byName(preset)).get()
                .satisfies(p -> assertThat(p.modelName()).isEqualTo(modelName))
                .satisfies(p -> assertThat(p.memoryMiB()).isEqualTo(memoryMiB));
    }

    @Test
    void everyPresetIsAnNvidiaModel() {
        assertThat(GpuPreset.values()).allSatisfy(p -> assertThat(p.modelName()).contains("NVIDIA"));
    }

    @Test
    void uuidsAreStablePerNodeAndIndexAndDifferAcrossNodes() {
        MockInventory twoL4 = MockInventory.of(GpuPreset.L4_24GB, 2);
        List<GpuDevice> first = new MockDeviceSource("worker-1", twoL4, 10).discover();
        List<GpuDevice> again = new MockDeviceSource("worker-1", twoL4, 10).discover();
        List<GpuDevice> other = new MockDeviceSource("worker-2", twoL4, 10).discover();

        assertThat(first).isEqualTo(again);
        assertThat(first).extracting(GpuDevice::index).containsExactly(0, 1);
        assertThat(first).extracting(GpuDevice::id)
                .allMatch(id -> id.matches("GPU-[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"))
                .doesNotHaveDuplicates()
                .doesNotContainAnyElementsOf(other.stream().map(GpuDevice::id).toList());
    }

    @Test
    void yamlInventoryWithPresetsOverridesAndExplicitModels(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("inventory.yaml");
        Files.writeString(file, """
                devices:
                  - preset: H100-80GB
                    count: 2
                    numa: 1
                  - name: "Tesla T4"
                    memoryMiB: 15360
                    splitCount: 4
                    cores: 50
                    mode: mps
                    healthy: false
                """);

        List<GpuDevice> devices = new MockDeviceSource("gpu-node", MockInventory.load(file), 10).discover();

        assertThat(devices).hasSize(3);
        assertThat(devices.get(0)).isEqualTo(new GpuDevice(MockDeviceSource.mockUuid("gpu-node", 0), 0, 10, 81559, 100,
                "NVIDIA H100 80GB HBM3", 1, "hami-core", true));
        assertThat(devices.get(1).index()).isEqualTo(1);
        assertThat(devices.get(2)).isEqualTo(new GpuDevice(MockDeviceSource.mockUuid("gpu-node", 2), 2, 4, 15360, 50,
                "NVIDIA-Tesla T4", 0, "mps", false));
    }

    @Test
    void jsonInventoryIsAccepted() {
        MockInventory inventory = MockInventory.parse("{\"devices\":[{\"preset\":\"H200-141GB\"}]}", "inline");

        assertThat(inventory.entries()).containsExactly(MockInventory.Entry.of(GpuPreset.H200_141GB, 1));
    }

    @Test
    void inventoryErrorsSayWhereAndWhatWasExpected() {
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: A100-40GB\n", "inv.yaml"))
                .hasMessage("inv.yaml: devices[0].preset: unknown preset 'A100-40GB' "
                        + "(expected one of: A100-80GB, L4-24GB, H100-80GB, H200-141GB, DCU-Z100L, DCU-K100, DCU-K100_AI,"
                        + " Ascend910B4, Ascend910B3, Ascend310P)");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - name: NVIDIA L4\n", "inv.yaml"))
                .hasMessageContaining("inv.yaml: devices[0]: name 'NVIDIA L4' without memoryMiB");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: L4-24GB\n    cout: 2\n", "inv.yaml"))
                .hasMessageContaining("unknown key 'cout'");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: L4-24GB\n    count: 0\n", "inv.yaml"))
                .hasMessage("inv.yaml: devices[0]: mock inventory: NVIDIA L4: count: 0 (expected: > 0)");
        assertThatThrownBy(() -> MockInventory.parse("gpus: []\n", "inv.yaml"))
                .hasMessageContaining("no 'devices' list");
        assertThatThrownBy(() -> MockInventory.parse("devices: []\n", "inv.yaml"))
                .hasMessageContaining("no devices (expected: at least one entry)");
        assertThatThrownBy(() -> MockInventory.parseShorthand("L4-24GB:two"))
                .hasMessage("--mock-gpus: 'L4-24GB:two' (expected: PRESET[:COUNT], e.g. L4-24GB:2)");
        assertThatThrownBy(() -> MockInventory.parseShorthand(" , "))
                .hasMessageStartingWith("--mock-gpus: ' , ' (expected: PRESET[:COUNT]");
    }

    @Test
    void shorthandListsPresetsWithCounts() {
        MockInventory inventory = MockInventory.parseShorthand("A100-80GB, L4-24GB:2");

        assertThat(inventory.gpuCount()).isEqualTo(3);
        assertThat(inventory.entries()).containsExactly(MockInventory.Entry.of(GpuPreset.A100_80GB, 1),
                MockInventory.Entry.of(GpuPreset.L4_24GB, 2));
    }
}
