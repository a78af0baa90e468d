package io.tenantgateway.agent.devices;

import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Simulated chips of one Ascend type as Project-HAMi/ascend-device-plugin (v1.4.0) serving that chip registers them
 * (VENDOR-PLUGINS.md §2.3, hami-vendors.md §5): {@code hami.io/node-register-<chip>} in HAMi's JSON, keys {@code id,
 * index, count, devmem, devcore, type, health, custominfo}, each omitted when zero or false, {@code custominfo}
 * {@code {"NetworkID":0}} for positions 0 to 3 and {@code 1} above on {@code Ascend910*} chips; plus the node
 * annotation {@code hami-vnpu-core} ({@code "false"}: template mode, devcore = aiCore; {@code "true"}: devcore 100).
 * The chip id, the dcmi die id on hardware, is simulated in its shape: 5 groups of 8 upper-case hex digits joined by
 * {@code -}, from SHA-256 of {@code "<node>/<chip>/<index>"} (stable per node, chip and index). Positions count the
 * node's chips of this type in inventory order, from 0.
 *
 * <p>Written as HAMi v2.10 writes the JSON: without the {@code "devicepairscore":{}} the plugin's older pinned HAMi
 * appends, which every scheduler ignores.
 */
final class AscendSimulation {
    /** The node annotation the plugin writes on every cycle. */
    static final String VNPU_CORE_ANNOTATION = Annotations.NODE_HAMI_VNPU_CORE;

    private AscendSimulation() {
    }

    static SimulatedVendor vendor(String node, NodeVendor chip, List<MockInventory.VendorEntry> entries,
            boolean hamiVnpuCore) {
        List<RegisteredDevice> devices = new ArrayList<>();
        for (MockInventory.VendorEntry entry : entries) {
            VendorPreset preset = entry.preset();
            for (int i = 0; i < entry.count(); i++) {
                int index = devices.size();
                Map<String, Object> custominfo = chip.commonWord().startsWith("Ascend910")
                        ? Map.of("NetworkID", index > 3 ? 1L : 0L) : Map.of();
                devices.add(new RegisteredDevice(chipId(node, chip.commonWord(), index), index, preset.count(),
                        preset.devmem(), hamiVnpuCore ? 100 : preset.devcore(), chip.commonWord(), 0, "",
                        entry.healthy(), "", custominfo));
            }
        }
        return new SimulatedVendor(chip, devices, RegisterCodec.encodeJson(devices, HamiRelease.V2_10),
                Map.of(VNPU_CORE_ANNOTATION, Boolean.toString(hamiVnpuCore)), SimulatedVendor.capacity(chip, devices));
    }

    /** The simulated die id of the node's {@code index}-th chip of type {@code chip}: {@code XXXXXXXX-…} (5 × 8). */
    static String chipId(String node, String chip, int index) {
        String hex = SimulatedVendor.hashHex(node + "/" + chip + "/" + index, 20);
        StringBuilder id = new StringBuilder(44);
        for (int group = 0; group < 5; group++) {
            if (group > 0) {
                id.append('-');
            }
            id.append(hex, group * 8, group * 8 + 8);
        }
        return id.toString();
    }
}
