package io.tenantgateway.agent.channels;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.part.Channel;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.List;
import java.util.Optional;

/**
 * What device registration discovered on this node (or why discovery fails), published on {@link #CHANNEL} for the
 * device plugin: kubelet and the register annotations list the same devices.
 *
 * @param devices the NVIDIA GPUs found (empty while failing)
 * @param vendorDevices the other vendors' simulated devices, one group per vendor in inventory order (mock mode only;
 *                      empty on a pure-NVIDIA node)
 * @param failure why the last discovery failed, when it did
 */
public record DeviceDiscovery(List<GpuDevice> devices, List<VendorDevices> vendorDevices, Optional<String> failure) {
    /** Device registration → the device plugin. */
    public static final Channel.Key<DeviceDiscovery> CHANNEL = Channel.Key.of("device-discovery");

    public DeviceDiscovery {
        devices = List.copyOf(requireNonNull(devices, "devices"));
        vendorDevices = List.copyOf(requireNonNull(vendorDevices, "vendorDevices"));
        requireNonNull(failure, "failure");
    }

    /**
     * One vendor's devices as its plugin registers them.
     *
     * @param vendor the vendor (Hygon, an Ascend chip)
     * @param devices its devices, in the register annotation's order
     */
    public record VendorDevices(NodeVendor vendor, List<RegisteredDevice> devices) {
        public VendorDevices {
            requireNonNull(vendor, "vendor");
            devices = List.copyOf(requireNonNull(devices, "devices"));
        }
    }

    public static DeviceDiscovery found(List<GpuDevice> devices) {
        return new DeviceDiscovery(devices, List.of(), Optional.empty());
    }

    public static DeviceDiscovery found(List<GpuDevice> devices, List<VendorDevices> vendorDevices) {
        return new DeviceDiscovery(devices, vendorDevices, Optional.empty());
    }

    public static DeviceDiscovery failed(String reason) {
        return new DeviceDiscovery(List.of(), List.of(), Optional.of(reason));
    }
}
