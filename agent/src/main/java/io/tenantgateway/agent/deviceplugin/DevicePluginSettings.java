package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

/**
 * The device plugin: where it serves (kubelet's directory, the resource) and how its Allocate writes the pod.
 */
public record DevicePluginSettings(io.tenantgateway.deviceplugin.DevicePluginConfig plugin,
        AllocatorConfig allocator) {
    public DevicePluginSettings {
        requireNonNull(plugin, "plugin");
        requireNonNull(allocator, "allocator");
    }
}
