package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.HamiCore;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.VirtualDeviceIds;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * HAMi's NVIDIA device plugin (shared/spec/device-plugin.md §2 steps 4 and 5): replicas {@code <UUID>-<i>}; the
 * answer is HAMi-core's environment and mounts (not MIG). Device specs are never passed: the NVIDIA container runtime
 * adds the devices from {@code NVIDIA_VISIBLE_DEVICES} (HAMi's chart default {@code PASS_DEVICE_SPECS=false}).
 */
final class NvidiaAllocation extends VendorAllocationBase {
    private final HamiCoreSettings settings;

    NvidiaAllocation(NodeVendor vendor, HamiCoreSettings settings) {
        super(vendor);
        this.settings = requireNonNull(settings, "settings");
    }

    @Override
    public String virtualDeviceId(String deviceId, int replica) {
        return VirtualDeviceIds.of(deviceId, replica);
    }

    @Override
    public boolean hamiCoreHost() {
        return true;
    }

    @Override
    public ContainerAllocation answer(PodView pod, ContainerView container, List<ContainerDevice> devices,
            Map<String, Long> nodeDevices, String libraryFile, String cacheId) {
        Map<String, String> envs = new LinkedHashMap<>();
        Set<String> uuids = new LinkedHashSet<>();
        devices.forEach(d -> uuids.add(d.uuid()));
        envs.put(HamiCore.ENV_VISIBLE_DEVICES, String.join(",", uuids));
        for (int i = 0; i < devices.size(); i++) {
            envs.put(HamiCore.ENV_MEMORY_LIMIT_PREFIX + i, devices.get(i).memoryMiB() + "m");
        }
        envs.put(HamiCore.ENV_SM_LIMIT, Integer.toString(devices.get(0).cores()));
        envs.put(HamiCore.ENV_MEMORY_SHARED_CACHE, settings.path("vgpu/" + cacheId + ".cache"));
        if (settings.deviceMemoryScaling() > 1) {
            envs.put(HamiCore.ENV_OVERSUBSCRIBE, "true");
        }
        if (!settings.logLevel().isEmpty()) {
            envs.put(HamiCore.ENV_LOG_LEVEL, settings.logLevel());
        }
        if (settings.disableCoreLimit()) {
            envs.put(HamiCore.ENV_CORE_UTILIZATION_POLICY, "disable");
        }
        List<Mount> mounts = new ArrayList<>();
        mounts.add(new Mount(settings.path(HamiCore.LIBRARY), settings.path("vgpu/" + libraryFile), true));
        mounts.add(new Mount(settings.path("vgpu"), containerCacheDirectory(settings, pod, container.name()), false));
        mounts.add(new Mount(HamiCore.LOCK_DIR, HamiCore.LOCK_DIR, false));
        if (!parseBool(container.env().get(HamiCore.ENV_DISABLE_CONTROL))) {
            mounts.add(new Mount(HamiCore.CONTAINER_PRELOAD, settings.path(HamiCore.PRELOAD), true));
        }
        return new ContainerAllocation(envs, mounts);
    }

    /** The host directory mounted at {@code <hookPath>/vgpu}: {@code <hookPath>/vgpu/containers/<podUID>_<name>}. */
    static String containerCacheDirectory(HamiCoreSettings settings, PodView pod, String containerName) {
        return settings.path(HamiCore.CONTAINERS + "/" + pod.uid() + "_" + containerName);
    }

    /** Go's {@code strconv.ParseBool}: 1, t, T, TRUE, true, True are true; anything else (or nothing) false. */
    static boolean parseBool(String value) {
        if (value == null) {
            return false;
        }
        return switch (value) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            default -> false;
        };
    }
}
