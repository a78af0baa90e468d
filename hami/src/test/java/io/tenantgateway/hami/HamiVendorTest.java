package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The vendor table against the module's other tables: the codecs' register rows, the capacity rule, NodeVendor. */
class HamiVendorTest {

    @Test
    void theRegisterTableHasExactlyTheVendorTablesRegisterKeysAndFormats() {
        Map<String, RegisterFormat> fromVendors = new TreeMap<>();
        for (HamiVendor vendor : HamiVendor.values()) {
            if (!vendor.registerKey().isEmpty()) {
                fromVendors.put(vendor.registerKey(), vendor.registerFormat());
            }
        }
        Map<String, RegisterFormat> fromCodecs = new TreeMap<>();
        for (RegisterVendor row : RegisterVendor.TABLE) {
            String key = row.isFixedKey() ? row.keyPrefix() : row.keyPrefix() + HamiVendor.CHIP + row.keySuffix();
            fromCodecs.put(key, row.format());
        }
        assertThat(fromCodecs).isEqualTo(fromVendors);
    }

    @ParameterizedTest
    @EnumSource(HamiRelease.class)
    void theCapacityRuleNamesTheCapacityTablesResources(HamiRelease release) {
        Set<String> fromVendors = Arrays.stream(HamiVendor.values()).map(v -> v.capacityResource(release))
                .filter(r -> !r.isEmpty()).collect(Collectors.toCollection(TreeSet::new));
        Set<String> fromCapacity = CapacityVendor.TABLE.stream().filter(v -> v.releases().contains(release))
                .map(CapacityVendor::countResource).collect(Collectors.toCollection(TreeSet::new));
        assertThat(fromCapacity).isEqualTo(fromVendors);
    }

    @Test
    void nodeVendorsAreTheSimulatedRowsFilledIn() {
        assertThat(NodeVendor.HYGON).isEqualTo(new NodeVendor(NodeVendor.Kind.HYGON, "DCU", "hygon.com/dcunum",
                "hygon.com/dcumem", "hygon.com/dcucores", "hami.io/node-dcu-register", RegisterFormat.LEGACY_TEXT,
                "hami.io/node-handshake-dcu", "hami.io/dcu-devices-to-allocate", "hami.io/dcu-devices-allocated",
                "hygon.com_dcunum"));
        assertThat(NodeVendor.ascend("Ascend910B4")).isEqualTo(new NodeVendor(NodeVendor.Kind.ASCEND, "Ascend910B4",
                "huawei.com/Ascend910B4", "huawei.com/Ascend910B4-memory", "huawei.com/Ascend910B4-core",
                "hami.io/node-register-Ascend910B4", RegisterFormat.JSON, "hami.io/node-handshake-Ascend910B4",
                "hami.io/Ascend910B4-devices-to-allocate", "hami.io/Ascend910B4-devices-allocated",
                "Ascend910B4.sock"));
        assertThat(NodeVendor.NVIDIA.registerKey()).isEqualTo(Annotations.NODE_NVIDIA_REGISTER);
        assertThat(NodeVendor.NVIDIA.socketName()).isEqualTo("nvidia-gpu.sock");
        for (NodeVendor.Kind kind : NodeVendor.Kind.values()) {
            assertThat(HamiVendor.simulatedAs(kind).simulation()).isEqualTo(kind);
        }
        assertThat(NodeVendor.Kind.HYGON.display()).isEqualTo("Hygon");
    }

    @Test
    void everyRowIsWholeAndPerChipRowsHoldTheChipEverywhere() {
        Set<String> displays = new HashSet<>();
        for (HamiVendor vendor : HamiVendor.values()) {
            assertThat(displays.add(vendor.display())).as("one row per vendor: %s", vendor).isTrue();
            assertThat(vendor.countResource()).as(vendor.name()).isNotEmpty();
            assertThat(vendor.allocatedKey()).as(vendor.name()).isNotEmpty();
            assertThat(vendor.registerKey().isEmpty() && vendor.capacityResource(HamiRelease.V2_10).isEmpty()
                    && vendor.capacityResource(HamiRelease.V2_9).isEmpty() && vendor != HamiVendor.ENFLAME_SHARED)
                    .as("%s: HAMi reads a register key or capacity", vendor).isFalse();
            assertThat(vendor.registerKey().isEmpty()).as(vendor.name()).isEqualTo(vendor.registerFormat() == null);
            if (vendor.perChip()) {
                for (String key : vendor.resources()) {
                    assertThat(key).contains(HamiVendor.CHIP);
                }
                assertThat(vendor.registerKey()).contains(HamiVendor.CHIP);
                assertThat(vendor.switchName()).as("per-chip backends are switched on").isNotEmpty();
            }
            if (vendor.simulation() != null) {
                assertThat(vendor.handshakeKey()).as(vendor.name()).isNotEmpty();
                assertThat(vendor.toAllocateKey()).as(vendor.name()).isNotEmpty();
                assertThat(vendor.socketName()).as(vendor.name()).isNotEmpty();
            }
        }
    }

    @Test
    void ownNodeKeysCutChipsToThePrefix() {
        HamiVendor.OwnNodeKeys ascend = HamiVendor.ASCEND.ownNodeKeys();
        assertThat(ascend.annotations()).containsExactly("hami-vnpu-core");
        assertThat(ascend.annotationPrefixes()).containsExactlyInAnyOrder("hami.io/node-register-Ascend",
                "hami.io/node-handshake-Ascend");
        assertThat(ascend.resourcePrefixes()).containsExactly("huawei.com/Ascend");
        assertThat(HamiVendor.NVIDIA.ownNodeKeys().annotations()).containsExactlyInAnyOrder(
                Annotations.NODE_NVIDIA_REGISTER, Annotations.NODE_HANDSHAKE, Annotations.NODE_LOCK);
        assertThat(HamiVendor.CAMBRICON.ownNodeKeys().annotations()).as("not simulated").isEmpty();
    }

    @Test
    void commonWordsFollowTheRelease() {
        assertThat(HamiVendor.AMD.commonWord(HamiRelease.V2_10)).isEqualTo("AMD");
        assertThat(HamiVendor.AMD.commonWord(HamiRelease.V2_9)).isEqualTo("AMDGPU");
        assertThat(HamiVendor.BIREN.in(HamiRelease.V2_9)).isFalse();
        assertThat(HamiRelease.fromText("2.9.0")).contains(HamiRelease.V2_9);
        assertThat(HamiRelease.fromText("v3")).isEmpty();
        assertThat(HamiRelease.labels()).isEqualTo("v2.10, v2.9");
    }
}
