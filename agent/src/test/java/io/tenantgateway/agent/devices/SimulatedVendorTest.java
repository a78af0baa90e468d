package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.HamiVendor;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Simulated Hygon and Ascend devices: the presets' figures, {@code --mock-devices} and the inventory file, and each
 * vendor's register value byte for byte as its plugin writes it, read back as HAMi v2.10's scheduler reads it.
 * The expected ids were computed independently (Python hashlib: SHA-256 of the documented input, upper-case hex).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimulatedVendorTest {

    /** {@code dcu-worker} with {@code DCU-K100:1,DCU-Z100L:1}: 9 fields per DCU, mode "hami", index counted. */
    static final String DCU_WORKER = "DCU-231DE534B6241EEA,4,65536,100,DCU-K100,0,true,0,hami:"
            + "DCU-95994635573E9A72,4,32768,100,DCU-Z100L,0,true,1,hami:";

    /** {@code npu-worker} with {@code Ascend910B3:6}: NetworkID 1 from position 4; index 0 omitted. */
    static final String NPU_WORKER_910B3 = "["
            + chip("5A070121-1B67B3CC-D4DCB9F9-BDAA9388-746D5FD8", 0, 0) + ","
            + chip("CA8074B0-2CA8FB11-12E9798F-7528BF03-CF89BA9B", 1, 0) + ","
            + chip("1CD8B85F-45298984-67B98BC7-21FCEB45-E40F5450", 2, 0) + ","
            + chip("37A5D164-5DA4C700-85497BB6-C8E5510B-D5FC08F0", 3, 0) + ","
            + chip("A02449A0-85F59741-136265A5-9611AD89-1DDFBDB0", 4, 1) + ","
            + chip("BADBB912-51D19672-A7352267-74FE1249-3FA143AE", 5, 1) + "]";

    private static String chip(String id, int index, int networkId) {
        return "{\"id\":\"" + id + "\"" + (index == 0 ? "" : ",\"index\":" + index)
                + ",\"count\":4,\"devmem\":65536,\"devcore\":20,\"type\":\"Ascend910B3\",\"health\":true,"
                + "\"custominfo\":{\"NetworkID\":" + networkId + "}}";
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "DCU-Z100L,   HYGON,  DCU,         32768, 100, 4",
        "dcu-k100,    HYGON,  DCU,         65536, 100, 4",
        "DCU-K100_AI, HYGON,  DCU,         65536, 100, 4",
        "Ascend910B4, ASCEND, Ascend910B4, 32768, 20,  4",
        "ASCEND910B3, ASCEND, Ascend910B3, 65536, 20,  4",
        "Ascend310P,  ASCEND, Ascend310P,  21527, 8,   7"})
    void presetsCarryTheFiguresTheirPluginsRegister(String name, NodeVendor.Kind kind, String commonWord,
            int devmem, int devcore, int count) {
        VendorPreset preset = VendorPreset.byName(name).orElseThrow();

        assertThat(preset.kind()).isEqualTo(kind);
        assertThat(preset.vendor().commonWord()).isEqualTo(commonWord);
        assertThat(preset.devmem()).isEqualTo(devmem);
        assertThat(preset.devcore()).isEqualTo(devcore);
        assertThat(preset.count()).isEqualTo(count);
    }

    @Test
    void presetNamesAreTheRegisteredTypesAndNeverAnNvidiaPresets() {
        assertThat(VendorPreset.names())
                .isEqualTo("DCU-Z100L, DCU-K100, DCU-K100_AI, Ascend910B4, Ascend910B3, Ascend310P");
        assertThat(VendorPreset.values()).allSatisfy(p -> assertThat(GpuPreset.byName(p.presetName())).isEmpty());
        assertThat(VendorPreset.ASCEND_310P.vendor()).isEqualTo(NodeVendor.ascend("Ascend310P"));
        assertThat(VendorPreset.DCU_K100_AI.vendor()).isEqualTo(NodeVendor.HYGON);
    }

    @Test
    void mockDevicesListsEveryVendorsPresetsWithCounts() {
        MockInventory inventory = MockInventory.parseDevices("Ascend910B4:2, DCU-K100:1,A100-80GB:1,dcu-z100l");

        assertThat(inventory.entries()).containsExactly(MockInventory.Entry.of(GpuPreset.A100_80GB, 1));
        assertThat(inventory.vendorEntries()).containsExactly(
                MockInventory.VendorEntry.of(VendorPreset.ASCEND_910B4, 2),
                MockInventory.VendorEntry.of(VendorPreset.DCU_K100, 1),
                MockInventory.VendorEntry.of(VendorPreset.DCU_Z100L, 1));
        assertThat(inventory.hamiVnpuCore()).isFalse();
        assertThat(MockInventory.parseDevices("A100-80GB,L4-24GB:2"))
                .as("NVIDIA presets alone: what --mock-gpus makes of them")
                .isEqualTo(MockInventory.parseShorthand("A100-80GB,L4-24GB:2"));
    }

    @Test
    void mockDevicesErrorsNameTheFlagThePieceAndEveryPreset() {
        String every = "A100-80GB, L4-24GB, H100-80GB, H200-141GB, DCU-Z100L, DCU-K100, DCU-K100_AI, Ascend910B4,"
                + " Ascend910B3, Ascend310P";
        assertThatThrownBy(() -> MockInventory.parseDevices("Ascend910B4:2,Ascend910C:1"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: Ascend910C:1 (expected: PRESET[:N],… with PRESET one of " + every + ")");
        assertThatThrownBy(() -> MockInventory.parseDevices("DCU-K100:two"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: DCU-K100:two (expected: PRESET[:N] with N > 0, e.g. DCU-K100:2)");
        assertThatThrownBy(() -> MockInventory.parseDevices("Ascend310P:0"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: Ascend310P:0 (expected: PRESET[:N] with N from 1 to 64, e.g. Ascend310P:2;"
                        + " at most 256 simulated devices in all)");
        assertThatThrownBy(() -> MockInventory.parseDevices(" , "))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: ' , ' (expected: PRESET[:N],… with PRESET one of " + every + ")");
    }

    /** Simulated devices are heap objects and plugin replicas: 64 an entry, 256 in all, whatever spells them. */
    @Test
    void simulatedDeviceCountsAreCapped() {
        assertThatThrownBy(() -> MockInventory.parseDevices("Ascend910B4:100000"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: Ascend910B4:100000 (expected: PRESET[:N] with N from 1 to 64, e.g."
                        + " Ascend910B4:2; at most 256 simulated devices in all)");
        assertThat(MockInventory.parseDevices("Ascend910B4:64").vendorEntries().get(0).count()).isEqualTo(64);
        assertThatThrownBy(() -> MockInventory.parseDevices("Ascend910B4:64,Ascend910B3:64,Ascend310P:64,"
                + "DCU-K100:64,DCU-Z100L:1")).isInstanceOf(ConfigException.class)
                .hasMessage("--mock-devices: 257 simulated devices (expected: at most 256 in all, 64 per entry)");
        assertThatThrownBy(() -> MockInventory.parseShorthand("L4-24GB:65"))
                .hasMessageStartingWith("--mock-gpus: L4-24GB:65 (expected: PRESET[:N] with N from 1 to 64");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: DCU-K100\n    count: 65\n", "inv.yaml"))
                .hasMessage("inv.yaml: devices[0]: mock inventory: DCU-K100: count: 65 (expected: at most 64 per"
                        + " entry)");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - {preset: L4-24GB, count: 100000}\n", "inv.yaml"))
                .hasMessage("inv.yaml: devices[0]: mock inventory: NVIDIA L4: count: 100000 (expected: at most 64"
                        + " per entry)");
        StringBuilder many = new StringBuilder("devices:\n");
        for (int i = 0; i < 5; i++) {
            many.append("  - {preset: L4-24GB, count: 64}\n");
        }
        assertThatThrownBy(() -> MockInventory.parse(many.toString(), "inv.yaml"))
                .hasMessage("inv.yaml: 320 simulated devices (expected: at most 256 in all, 64 per entry)");
    }

    @Test
    void mockGpusStaysNvidiaOnlyAndPointsVendorPartsToMockDevices() {
        assertThatThrownBy(() -> MockInventory.parseShorthand("A100-80GB,Ascend910B4:2"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--mock-gpus: Ascend910B4 (expected: an NVIDIA preset, one of A100-80GB, L4-24GB,"
                        + " H100-80GB, H200-141GB; Hygon and Ascend parts go in --mock-devices, e.g."
                        + " --mock-devices=Ascend910B4)");
        assertThatThrownBy(() -> MockInventory.parseShorthand("A100-40GB"))
                .hasMessage("--mock-gpus: unknown preset 'A100-40GB' (expected one of: A100-80GB, L4-24GB, H100-80GB,"
                        + " H200-141GB)");
    }

    @Test
    void inventoryFileTakesVendorPresetsWithCountHealthAndTheVnpuCoreMode() {
        MockInventory inventory = MockInventory.parse("""
                hamiVnpuCore: true
                devices:
                  - preset: L4-24GB
                  - preset: Ascend310P
                    count: 2
                    healthy: false
                  - preset: DCU-K100_AI
                """, "inv.yaml");

        assertThat(inventory.entries()).containsExactly(MockInventory.Entry.of(GpuPreset.L4_24GB, 1));
        assertThat(inventory.vendorEntries()).containsExactly(
                new MockInventory.VendorEntry(VendorPreset.ASCEND_310P, 2, false),
                MockInventory.VendorEntry.of(VendorPreset.DCU_K100_AI, 1));
        assertThat(inventory.hamiVnpuCore()).isTrue();
        assertThat(MockInventory.parse("devices: [{preset: DCU-Z100L}]", "inline").entries()).isEmpty();
    }

    @Test
    void inventoryFileErrorsForVendorPresetsSayWhereAndWhat() {
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: Ascend910B4\n    splitCount: 2\n",
                "inv.yaml")).isInstanceOf(ConfigException.class)
                .hasMessage("inv.yaml: devices[0]: key 'splitCount' does not apply to Ascend910B4 (expected one of:"
                        + " count, healthy, preset)");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: DCU-K100\n    count: 0\n", "inv.yaml"))
                .hasMessage("inv.yaml: devices[0]: mock inventory: DCU-K100: count: 0 (expected: > 0)");
        assertThatThrownBy(() -> MockInventory.parse("devices:\n  - preset: Ascend310P\n    healthy: maybe\n",
                "inv.yaml")).hasMessage("inv.yaml: devices[0].healthy: \"maybe\" (expected: true or false)");
        assertThatThrownBy(() -> MockInventory.parse("hamiVnpuCore: yes please\ndevices: [{preset: Ascend310P}]\n",
                "inv.yaml")).hasMessage("inv.yaml: hamiVnpuCore: \"yes please\" (expected: true or false)");
    }

    @Test
    void hygonRegistersLegacyTextAsDcuDevicePluginHeadWritesIt() {
        List<SimulatedVendor> vendors = SimulatedVendor.of("dcu-worker",
                MockInventory.parseDevices("DCU-K100,DCU-Z100L"));

        assertThat(vendors).singleElement().satisfies(hygon -> {
            assertThat(hygon.vendor()).isEqualTo(NodeVendor.HYGON);
            assertThat(hygon.register()).isEqualTo(DCU_WORKER);
            assertThat(hygon.annotations()).isEmpty();
            assertThat(hygon.capacity()).containsExactly(entry("hygon.com/dcunum", "8"),
                    entry("hygon.com/dcumem", "98304"), entry("hygon.com/dcucores", "200"));
        });
        RegisterCodec.Result read = RegisterCodec.decode("hami.io/node-dcu-register", DCU_WORKER, HamiRelease.V2_10,
                "dcu-worker");
        assertThat(read.error()).isNull();
        assertThat(read.devices()).as("as written, with the common word HAMi's scheduler adds").containsExactly(
                withVendor(RegisteredDevice.of("DCU-231DE534B6241EEA", 0, 4, 65536, 100, "DCU-K100", 0, "hami", true)),
                withVendor(RegisteredDevice.of("DCU-95994635573E9A72", 1, 4, 32768, 100, "DCU-Z100L", 0, "hami", true)));
        assertThat(read.devices()).isEqualTo(vendors.get(0).devices().stream().map(SimulatedVendorTest::withVendor)
                .toList());
    }

    @Test
    void ascendRegistersJsonPerChipWithNetworkIdsAndTemplateMode() {
        List<SimulatedVendor> vendors = SimulatedVendor.of("npu-worker",
                MockInventory.parseDevices("Ascend910B3:6,Ascend310P"));

        assertThat(vendors).extracting(SimulatedVendor::vendor)
                .containsExactly(NodeVendor.ascend("Ascend910B3"), NodeVendor.ascend("Ascend310P"));
        SimulatedVendor b3 = vendors.get(0);
        assertThat(b3.register()).isEqualTo(NPU_WORKER_910B3);
        assertThat(b3.annotations()).containsExactly(entry("hami-vnpu-core", "false"));
        assertThat(b3.capacity()).containsExactly(entry("huawei.com/Ascend910B3", "24"),
                entry("huawei.com/Ascend910B3-memory", "393216"), entry("huawei.com/Ascend910B3-core", "120"));
        // Not a 910: no custominfo; its own key and position 0.
        assertThat(vendors.get(1).register()).isEqualTo("[{\"id\":\"706FC924-FD377040-89C2B47C-9775FDD3-B57B018B\","
                + "\"count\":7,\"devmem\":21527,\"devcore\":8,\"type\":\"Ascend310P\",\"health\":true}]");

        RegisterCodec.Result read = RegisterCodec.decode("hami.io/node-register-Ascend910B3", NPU_WORKER_910B3,
                HamiRelease.V2_10, "npu-worker");
        assertThat(read.error()).isNull();
        assertThat(read.devices()).isEqualTo(b3.devices().stream().map(SimulatedVendorTest::withVendor).toList());
        assertThat(read.devices()).extracting(RegisteredDevice::index).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(read.devices()).extracting(d -> d.custominfo().get("NetworkID"))
                .containsExactly(0L, 0L, 0L, 0L, 1L, 1L);
        assertThat(read.devices()).allSatisfy(d -> {
            assertThat(d.id()).matches("[0-9A-F]{8}(-[0-9A-F]{8}){4}");
            assertThat(d.count()).isEqualTo(4);
            assertThat(d.devmem()).isEqualTo(65536);
            assertThat(d.devcore()).isEqualTo(20);
            assertThat(d.type()).isEqualTo("Ascend910B3");
            assertThat(d.health()).isTrue();
            assertThat(d.mode()).isEmpty();
        });
    }

    @Test
    void ascendInVnpuCoreModeRegistersDevcore100AndUnhealthyChipsLeaveCapacity() {
        MockInventory inventory = MockInventory.parse("""
                hamiVnpuCore: true
                devices:
                  - preset: Ascend910B4
                  - preset: Ascend910B4
                    healthy: false
                """, "inline");

        SimulatedVendor b4 = SimulatedVendor.of("npu-worker", inventory).get(0);

        assertThat(b4.annotations()).containsExactly(entry("hami-vnpu-core", "true"));
        assertThat(b4.devices()).extracting(RegisteredDevice::devcore).containsExactly(100, 100);
        assertThat(b4.devices()).extracting(RegisteredDevice::health).containsExactly(true, false);
        assertThat(b4.register()).as("an unhealthy chip omits health, as Go's omitempty does")
                .contains("\"devcore\":100,\"type\":\"Ascend910B4\",\"custominfo\"");
        assertThat(b4.capacity()).containsExactly(entry("huawei.com/Ascend910B4", "4"),
                entry("huawei.com/Ascend910B4-memory", "32768"), entry("huawei.com/Ascend910B4-core", "100"));
    }

    @Test
    void idsAreStablePerNodeAndPositionAndDifferAcrossNodesAndChips() {
        MockInventory inventory = MockInventory.parseDevices("Ascend910B4:2,Ascend910B3:2,DCU-K100:2");
        List<String> first = ids(SimulatedVendor.of("worker-1", inventory));

        assertThat(ids(SimulatedVendor.of("worker-1", inventory))).isEqualTo(first);
        assertThat(first).hasSize(6).doesNotHaveDuplicates()
                .doesNotContainAnyElementsOf(ids(SimulatedVendor.of("worker-2", inventory)));
        assertThat(first.subList(4, 6)).allMatch(id -> id.matches("DCU-[0-9A-F]{16}"));
    }

    @Test
    void nvidiaOnlyInventoriesHaveNoSimulatedVendors() {
        assertThat(SimulatedVendor.of("worker-1", MockInventory.parseShorthand("A100-80GB"))).isEmpty();
        assertThat(DeviceRegistrar.simulatedVendors(DeviceRegistrationConfig.builder("worker-1")
                .mock(MockInventory.parseShorthand("L4-24GB:2")).build())).isEmpty();
        assertThat(DeviceRegistrar.simulatedVendors(DeviceRegistrationConfig.builder("worker-1").build())).isEmpty();
        assertThat(SimulatedVendor.of("worker-1", MockInventory.parseDevices("A100-80GB,DCU-K100")))
                .extracting(SimulatedVendor::vendor).containsExactly(NodeVendor.HYGON);
    }

    private static List<String> ids(List<SimulatedVendor> vendors) {
        return vendors.stream().flatMap(v -> v.devices().stream()).map(RegisteredDevice::id).toList();
    }

    @Test
    void capacityCountsHealthyDevicesOnly() {
        List<RegisteredDevice> devices = List.of(
                RegisteredDevice.of("DCU-a", 0, 4, 65536, 100, "DCU-K100", 0, "hami", true),
                RegisteredDevice.of("DCU-b", 1, 4, 65536, 100, "DCU-K100", 0, "hami", false));

        assertThat(SimulatedVendor.capacity(NodeVendor.HYGON, devices)).isEqualTo(Map.of("hygon.com/dcunum", "4",
                "hygon.com/dcumem", "65536", "hygon.com/dcucores", "100"));
    }

    /** {@code d} as HAMi's scheduler reads it back: devicevendor is the vendor's common word (DCU, the chip). */
    private static RegisteredDevice withVendor(RegisteredDevice d) {
        String word = d.type().startsWith("DCU") ? "DCU" : d.type();
        return new RegisteredDevice(d.id(), d.index(), d.count(), d.devmem(), d.devcore(), d.type(), d.numa(),
                d.mode(), d.health(), word, d.custominfo());
    }

    /**
     * The presets against the vendor table: each preset's vendor is a simulated row, each simulated row other than
     * NVIDIA has a preset, an Ascend preset's name starts with the row's chip prefix (the own-node policy admits that
     * prefix), and the chart's {@code devices.mock.devices} comment names every preset.
     */
    @Test
    void presetsAreTheVendorTablesSimulatedRows() throws IOException {
        for (VendorPreset preset : VendorPreset.values()) {
            HamiVendor row = HamiVendor.simulatedAs(preset.kind());
            assertThat(preset.vendor().resourceName()).as(preset.presetName())
                    .isEqualTo(HamiVendor.forChip(row.countResource(), preset.presetName()));
            assertThat(preset.presetName()).startsWith(row.chipPrefix());
        }
        for (HamiVendor row : HamiVendor.values()) {
            if (row.simulation() != null && row != HamiVendor.NVIDIA) {
                assertThat(Arrays.stream(VendorPreset.values()).anyMatch(p -> p.kind() == row.simulation()))
                        .as("a preset for %s", row.display()).isTrue();
            }
        }
        String values = Files.readString(Path.of(System.getProperty("user.dir"))
                .resolve("../charts/tenant-gateway/values.yaml"));
        String comment = values.substring(values.indexOf("# --mock-devices:"), values.indexOf("devices: \"\""));
        for (VendorPreset preset : VendorPreset.values()) {
            assertThat(comment).as("values.yaml devices.mock.devices").containsPattern(
                    "[ ,]" + Pattern.quote(preset.presetName()) + "[,;).]");
        }
    }
}
