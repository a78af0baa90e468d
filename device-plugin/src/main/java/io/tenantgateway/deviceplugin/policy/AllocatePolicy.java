package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.HamiCore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * HAMi's Allocate, the decision part (shared/spec/device-plugin.md §2, steps 2–5): which entry of the pod's
 * {@code hami.io/vgpu-devices-to-allocate} this call hands out, to which container, and the environment and mounts
 * HAMi-core needs. Pure: the caller reads the pod, writes the result and does the host-side directory work.
 *
 * <ul>
 *   <li>Entries are positional (init containers first, then the others) and taken in order: the first one that
 *       still names a device is this call's; its position names the container (HAMi #2899: an init container without
 *       a GPU keeps its empty entry, so nothing shifts).</li>
 *   <li>The entry must hold as many devices as kubelet handed this container. The GPU UUIDs come from the entry,
 *       not from kubelet's virtual IDs (kubelet's choice says only how many).</li>
 *   <li>Every UUID must be a GPU of this node: an entry naming another node's GPU fails the allocation instead of
 *       handing the container a device it cannot open.</li>
 * </ul>
 */
public final class AllocatePolicy {
    /** HAMi's message for a pod without (or without a pending) device entry. */
    public static final String DEVICE_REQUEST_NOT_FOUND = "device request not found";
    /** HAMi's message when the entry and kubelet's request differ in size. */
    public static final String DEVICE_NUMBER_NOT_MATCHED = "device number not matched";

    private final HamiCoreSettings settings;
    private final String nodeName;

    public AllocatePolicy(HamiCoreSettings settings, String nodeName) {
        this.settings = requireNonNull(settings, "settings");
        this.nodeName = requireNonNull(nodeName, "nodeName");
    }

    public HamiCoreSettings settings() {
        return settings;
    }

    /**
     * @param pod the pod this call is for (found by {@link PendingPodPolicy})
     * @param kubeletDeviceIds the virtual device IDs kubelet chose for the container
     * @param nodeGpus the UUIDs of this node's GPUs (what the plugin lists)
     * @param libraryFile the file name of HAMi-core's library in {@code <hookPath>/vgpu/} on the host:
     *     {@code libvgpu.so}, or the versioned {@code libvgpu.so.<v>} found there
     * @param cacheId a random UUID for the container's {@code CUDA_DEVICE_MEMORY_SHARED_CACHE} file
     */
    public AllocateDecision decide(PodView pod, List<String> kubeletDeviceIds, Set<String> nodeGpus,
            String libraryFile, String cacheId) {
        requireNonNull(pod, "pod");
        requireNonNull(kubeletDeviceIds, "kubeletDeviceIds");
        requireNonNull(nodeGpus, "nodeGpus");
        requireNonNull(libraryFile, "libraryFile");
        requireNonNull(cacheId, "cacheId");
        String value = pod.annotation(Annotations.POD_DEVICES_TO_ALLOCATE);
        if (value == null) {
            return new AllocateDecision.Refuse(DEVICE_REQUEST_NOT_FOUND, "pod " + pod.key() + " has no "
                    + Annotations.POD_DEVICES_TO_ALLOCATE + " annotation", true);
        }
        List<List<ContainerDevice>> entries;
        try {
            entries = DeviceAllocationCodec.decode(value);
        } catch (IllegalArgumentException e) {
            return new AllocateDecision.Refuse(DEVICE_REQUEST_NOT_FOUND, Annotations.POD_DEVICES_TO_ALLOCATE + " of "
                    + pod.key() + ": " + e.getMessage(), true);
        }
        int index = DeviceAllocationCodec.nextEntry(entries);
        if (index < 0) {
            // Everything was handed out. A pod already allocated keeps its success: this call is not its.
            boolean allocated = Annotations.BIND_PHASE_SUCCESS.equals(pod.annotation(Annotations.POD_BIND_PHASE));
            return new AllocateDecision.Refuse(DEVICE_REQUEST_NOT_FOUND, "every entry of "
                    + Annotations.POD_DEVICES_TO_ALLOCATE + " of " + pod.key() + " is handed out (\"" + value + "\")",
                    !allocated);
        }
        List<ContainerView> order = pod.entryOrder();
        if (index >= order.size()) {
            return new AllocateDecision.Refuse(DEVICE_REQUEST_NOT_FOUND, "entry " + index + " of "
                    + Annotations.POD_DEVICES_TO_ALLOCATE + " of " + pod.key() + " has no container (the pod has "
                    + pod.initContainers().size() + " init and " + pod.containers().size() + " containers)", true);
        }
        ContainerView container = order.get(index);
        List<ContainerDevice> devices = entries.get(index);
        if (devices.size() != kubeletDeviceIds.size()) {
            return new AllocateDecision.Refuse(DEVICE_NUMBER_NOT_MATCHED, "container " + container.name() + " of "
                    + pod.key() + ": entry " + index + " names " + devices.size() + " device(s), kubelet allocated "
                    + kubeletDeviceIds.size() + " " + kubeletDeviceIds, true);
        }
        Set<String> foreign = new TreeSet<>();
        for (ContainerDevice device : devices) {
            if (!nodeGpus.contains(device.uuid())) {
                foreign.add(device.uuid());
            }
        }
        if (!foreign.isEmpty()) {
            return new AllocateDecision.Refuse("devices " + foreign + " are not registered on node " + nodeName, "",
                    true);
        }
        List<List<ContainerDevice>> remaining = DeviceAllocationCodec.erase(entries, index);
        return new AllocateDecision.Allocate(index, container.name(), devices,
                allocation(pod, container, devices, libraryFile, cacheId), DeviceAllocationCodec.encode(remaining),
                DeviceAllocationCodec.nextEntry(remaining) < 0);
    }

    /** Steps 4 and 5: HAMi's environment and mounts for the entry (not MIG). */
    ContainerAllocation allocation(PodView pod, ContainerView container, List<ContainerDevice> devices,
            String libraryFile, String cacheId) {
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
        mounts.add(new Mount(settings.path("vgpu"), containerCacheDirectory(pod, container.name()), false));
        mounts.add(new Mount(HamiCore.LOCK_DIR, HamiCore.LOCK_DIR, false));
        if (!parseBool(container.env().get(HamiCore.ENV_DISABLE_CONTROL))) {
            mounts.add(new Mount(HamiCore.CONTAINER_PRELOAD, settings.path(HamiCore.PRELOAD), true));
        }
        return new ContainerAllocation(envs, mounts);
    }

    /** The host directory mounted at {@code <hookPath>/vgpu}: {@code <hookPath>/vgpu/containers/<podUID>_<name>}. */
    public String containerCacheDirectory(PodView pod, String containerName) {
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
