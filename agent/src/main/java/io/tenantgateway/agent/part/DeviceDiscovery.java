package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import java.util.List;
import java.util.Optional;

/**
 * What device registration discovered on this node (or why discovery fails), published on
 * {@link PartContext#deviceDiscovery()} for the device plugin: kubelet and the register annotation list the same GPUs.
 *
 * @param devices the devices found (empty while failing)
 * @param failure why the last discovery failed, when it did
 */
public record DeviceDiscovery(List<GpuDevice> devices, Optional<String> failure) {
    public DeviceDiscovery {
        devices = List.copyOf(requireNonNull(devices, "devices"));
        requireNonNull(failure, "failure");
    }

    public static DeviceDiscovery found(List<GpuDevice> devices) {
        return new DeviceDiscovery(devices, Optional.empty());
    }

    public static DeviceDiscovery failed(String reason) {
        return new DeviceDiscovery(List.of(), Optional.of(reason));
    }
}
