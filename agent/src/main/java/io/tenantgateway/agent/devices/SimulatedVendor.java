package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One simulated vendor other than NVIDIA on this node (Hygon, or one Ascend chip), as its device plugin would register
 * it: the devices, the register annotation's value, the other node annotations the plugin writes, and what kubelet
 * would advertise for it (written in mock mode, as for NVIDIA). The vendor-specific parts are built by
 * {@link HygonSimulation} and {@link AscendSimulation}, loaded only when an inventory names such a part; the
 * registrar treats every vendor alike, and writes each one's handshake with {@link NodeVendor#handshake}.
 *
 * @param vendor      the vendor: its register and handshake keys, its resources
 * @param devices     its devices, in the register annotation's order
 * @param register    the register annotation's value, exactly as the vendor's plugin writes it
 * @param annotations other node annotations the plugin writes with it (Ascend: {@code hami-vnpu-core})
 * @param capacity    node capacity and allocatable: the count resource (slices of healthy devices), memory (MiB)
 *                    and cores of the healthy devices
 */
public record SimulatedVendor(NodeVendor vendor, List<RegisteredDevice> devices, String register,
                              Map<String, String> annotations, Map<String, String> capacity) {

    public SimulatedVendor {
        requireNonNull(vendor, "vendor");
        devices = List.copyOf(requireNonNull(devices, "devices"));
        requireNonNull(register, "register");
        annotations = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(annotations, "annotations")));
        capacity = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(capacity, "capacity")));
    }

    /**
     * Every Hygon and Ascend vendor of {@code inventory} on {@code node}, one per vendor in order of first appearance
     * (Hygon is one vendor; each Ascend chip is its own, as one plugin serves one chip); empty for NVIDIA only.
     */
    public static List<SimulatedVendor> of(String node, MockInventory inventory) {
        requireNonNull(node, "node");
        requireNonNull(inventory, "inventory");
        if (inventory.vendorEntries().isEmpty()) {
            return List.of();
        }
        Map<NodeVendor, List<MockInventory.VendorEntry>> byVendor = new LinkedHashMap<>();
        for (MockInventory.VendorEntry entry : inventory.vendorEntries()) {
            byVendor.computeIfAbsent(entry.preset().vendor(), v -> new ArrayList<>()).add(entry);
        }
        List<SimulatedVendor> vendors = new ArrayList<>(byVendor.size());
        byVendor.forEach((vendor, entries) -> vendors.add(switch (vendor.kind()) {
            case HYGON -> HygonSimulation.vendor(node, entries);
            case ASCEND -> AscendSimulation.vendor(node, vendor, entries, inventory.hamiVnpuCore());
            case NVIDIA -> throw new IllegalStateException("NVIDIA is not a VendorPreset: " + entries);
        }));
        return List.copyOf(vendors);
    }

    /**
     * Node capacity as kubelet would advertise the vendor's plugins: the count resource is the sum of the healthy
     * devices' {@code count} (the slices kubelet lists), memory and cores the sums of their {@code devmem} and
     * {@code devcore}.
     */
    static Map<String, String> capacity(NodeVendor vendor, List<RegisteredDevice> devices) {
        HealthyTotals healthy = HealthyTotals.of(devices);
        Map<String, String> quantities = new LinkedHashMap<>();
        quantities.put(vendor.resourceName(), Long.toString(healthy.count()));
        quantities.put(vendor.memoryResource(), Long.toString(healthy.memoryMiB()));
        quantities.put(vendor.coreResource(), Long.toString(healthy.cores()));
        return quantities;
    }

    /** Upper-case hex of the first {@code bytes} bytes of SHA-256({@code text}): a stable simulated identifier. */
    static String hashHex(String text, int bytes) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().withUpperCase().formatHex(digest, 0, bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
