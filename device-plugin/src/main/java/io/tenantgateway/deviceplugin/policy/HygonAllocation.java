package io.tenantgateway.deviceplugin.policy;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.NodeVendor;
import java.util.List;
import java.util.Map;

/**
 * Project-HAMi/dcu-vgpu-device-plugin, simulated (device-plugin/VENDOR-PLUGINS.md §1): each DCU is listed as
 * {@code <id>-fake-<i>}; the error texts are the plugin's.
 *
 * <p>The answer is <b>empty</b>. The real plugin sets no environment and no annotations either; everything it does
 * answer refers to the host's DCU: the device specs {@code /dev/kfd}, {@code /dev/mkfd} and the card's
 * {@code /dev/dri/card<N>} and {@code renderD<M>}, the read-only mount {@code /opt/hyhal}, and for a slice the vdev
 * directory and {@code /opt/hygondriver}. A simulated node has none of those paths, and a device spec or mount whose
 * host path does not exist makes the container runtime fail the container, so the simulation leaves them out rather
 * than invent them. What a container got is on the pod ({@code hami.io/dcu-devices-allocated}) and in the agent's
 * log, not in the container.
 */
final class HygonAllocation extends VendorAllocationBase {
    /** The prefix of a DCU's ID; the rest is its serial number. */
    static final String ID_PREFIX = "DCU-";

    HygonAllocation(NodeVendor vendor) {
        super(vendor);
    }

    /** {@code <id>-fake-<i>}. */
    @Override
    public String virtualDeviceId(String deviceId, int replica) {
        return deviceId + "-fake-" + replica;
    }

    /**
     * The plugin's two checks per device: the ID must be {@code DCU-<serial>} ({@code invalid request device uuid
     * <uuid>}), and the serial one of this node's DCUs ({@code device serial number <serial> not found in mapper}).
     */
    @Override
    public AllocateDecision.Refuse checkDevices(List<ContainerDevice> devices, Map<String, Long> nodeDevices,
            String nodeName) {
        for (ContainerDevice device : devices) {
            String uuid = device.uuid();
            if (!uuid.startsWith(ID_PREFIX) || uuid.length() == ID_PREFIX.length()) {
                return new AllocateDecision.Refuse("invalid request device uuid " + uuid, "", true);
            }
            if (!nodeDevices.containsKey(uuid)) {
                return new AllocateDecision.Refuse("device serial number " + uuid.substring(ID_PREFIX.length())
                        + " not found in mapper", uuid + " is not a DCU of node " + nodeName, true);
            }
        }
        return null;
    }

    @Override
    public ContainerAllocation answer(PodView pod, ContainerView container, List<ContainerDevice> devices,
            Map<String, Long> nodeDevices, String libraryFile, String cacheId) {
        return new ContainerAllocation(Map.of(), List.of());
    }
}
