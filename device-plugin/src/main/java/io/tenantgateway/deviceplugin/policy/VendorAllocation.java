package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * What differs between the vendors' device plugins once {@link AllocatePolicy} has taken the pod's next entry (the
 * steps they share: positional entries, init containers first, the size check, the erase): which pod annotation holds
 * the entries, how the plugin names its devices to kubelet, the error texts it returns, and its answer for a container
 * (device-plugin/VENDOR-PLUGINS.md). Pure.
 *
 * <p>{@link #of} is the one place a vendor's class is chosen: {@link NvidiaAllocation}, {@link HygonAllocation},
 * {@link AscendAllocation}. It is an interface so that choosing NVIDIA's never loads the others (the verifier checks
 * an assignment to an interface type without loading the class assigned): a node without Hygon or Ascend devices
 * never loads their classes.
 */
public interface VendorAllocation {
    /** HAMi's message for a pod without (or without a pending) device entry. */
    String DEVICE_REQUEST_NOT_FOUND = "device request not found";
    /** HAMi's message when the entry and kubelet's request differ in size. */
    String DEVICE_NUMBER_NOT_MATCHED = "device number not matched";

    /**
     * The vendor's rules.
     *
     * @param settings HAMi-core's settings (NVIDIA's answer; the others do not use them)
     */
    static VendorAllocation of(NodeVendor vendor, HamiCoreSettings settings) {
        requireNonNull(vendor, "vendor");
        requireNonNull(settings, "settings");
        // Exhaustive, no default: a vendor kind added to NodeVendor does not compile until it has its own rules.
        return switch (vendor.kind()) {
            case NVIDIA -> new NvidiaAllocation(vendor, settings);
            case HYGON -> new HygonAllocation(vendor);
            case ASCEND -> new AscendAllocation(vendor);
        };
    }

    NodeVendor vendor();

    /** The pod annotation whose entries the plugin hands out and erases: {@code hami.io/<word>-devices-to-allocate}. */
    default String toAllocateKey() {
        return vendor().toAllocateKey();
    }

    /** The ID kubelet knows replica {@code replica} of device {@code deviceId} by. */
    String virtualDeviceId(String deviceId, int replica);

    /**
     * The plugin's list for kubelet: {@code count} replicas per device (the register annotation's {@code count}),
     * each with the device's health, devices in the order given.
     */
    default List<VirtualDevice> virtualDevices(List<RegisteredDevice> devices) {
        requireNonNull(devices, "devices");
        List<VirtualDevice> out = new ArrayList<>();
        for (RegisteredDevice device : devices) {
            for (int i = 0; i < device.count(); i++) {
                out.add(new VirtualDevice(virtualDeviceId(device.id(), i), device.id(), device.health(),
                        OptionalInt.empty()));
            }
        }
        return List.copyOf(out);
    }

    /** Whether the answer needs HAMi-core's host side (its library file, a fresh cache directory): NVIDIA's only. */
    default boolean hamiCoreHost() {
        return false;
    }

    /** A refusal before the entries are read, or {@code null} (Ascend reads its runtime annotation first). */
    default AllocateDecision.Refuse precheck(PodView pod) {
        return null;
    }

    /** The message when the to-allocate key is missing or unreadable, or the entry has no container. */
    default String requestNotFound() {
        return DEVICE_REQUEST_NOT_FOUND;
    }

    /** The message when every entry was handed out already. */
    default String noPendingEntry() {
        return DEVICE_REQUEST_NOT_FOUND;
    }

    /** The message when the entry names {@code annotation} devices and kubelet handed over {@code request}. */
    default String numberNotMatched(int annotation, int request) {
        return DEVICE_NUMBER_NOT_MATCHED;
    }

    /**
     * A refusal when the entry names a device this node's plugin does not list, or {@code null}.
     *
     * @param nodeDevices the devices the plugin lists: ID → position in the register list
     */
    default AllocateDecision.Refuse checkDevices(List<ContainerDevice> devices, Map<String, Long> nodeDevices,
            String nodeName) {
        Set<String> foreign = new TreeSet<>();
        for (ContainerDevice device : devices) {
            if (!nodeDevices.containsKey(device.uuid())) {
                foreign.add(device.uuid());
            }
        }
        return foreign.isEmpty() ? null : new AllocateDecision.Refuse("devices " + foreign
                + " are not registered on node " + nodeName, "", true);
    }

    /**
     * The answer for {@code container}, whose entry names {@code devices} (all listed by this node, checked).
     *
     * @param libraryFile HAMi-core's library file on the host (NVIDIA only)
     * @param cacheId a random UUID for the container's cache file (NVIDIA only)
     */
    ContainerAllocation answer(PodView pod, ContainerView container, List<ContainerDevice> devices,
            Map<String, Long> nodeDevices, String libraryFile, String cacheId);
}
