package io.tenantgateway.agent.devices;

import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Simulated Hygon DCUs as Project-HAMi/dcu-vgpu-device-plugin (HEAD) registers them (VENDOR-PLUGINS.md §1.3):
 * {@code hami.io/node-dcu-register} in legacy text, 9 fields per device,
 * {@code DCU-<serial>,4,<devmem>,100,<type>,0,<health>,<index>,hami:}. The serial, which the real plugin reads from
 * rocm-smi, is simulated: 16 upper-case hex digits of SHA-256 of {@code "<node>/DCU/<index>"}, so it is stable per
 * node and index and differs across nodes. Indexes count the node's DCUs in inventory order, from 0.
 */
final class HygonSimulation {
    /** The mode field the HEAD plugin writes (not {@code hami-core}). */
    static final String MODE = "hami";

    private HygonSimulation() {
    }

    static SimulatedVendor vendor(String node, List<MockInventory.VendorEntry> entries) {
        List<RegisteredDevice> devices = new ArrayList<>();
        for (MockInventory.VendorEntry entry : entries) {
            VendorPreset preset = entry.preset();
            for (int i = 0; i < entry.count(); i++) {
                int index = devices.size();
                devices.add(RegisteredDevice.of(deviceId(node, index), index, preset.count(), preset.devmem(),
                        preset.devcore(), preset.presetName(), 0, MODE, entry.healthy()));
            }
        }
        return new SimulatedVendor(NodeVendor.HYGON, devices, RegisterCodec.encodeLegacy(devices), Map.of(),
                SimulatedVendor.capacity(NodeVendor.HYGON, devices));
    }

    /** {@code DCU-} + the simulated serial of the node's {@code index}-th DCU. */
    static String deviceId(String node, int index) {
        return "DCU-" + SimulatedVendor.hashHex(node + "/DCU/" + index, 8);
    }
}
