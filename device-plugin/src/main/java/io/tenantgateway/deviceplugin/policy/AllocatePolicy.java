package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.DeviceAllocationCodec;
import io.tenantgateway.hami.NodeVendor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * HAMi's Allocate, the decision part (shared/spec/device-plugin.md §2, steps 2–5; the other vendors' plugins in
 * device-plugin/VENDOR-PLUGINS.md): which entry of the pod's {@code hami.io/<word>-devices-to-allocate} this call hands
 * out, to which container, and the vendor's answer ({@link VendorAllocation}: HAMi-core's environment and mounts for
 * NVIDIA). Pure: the caller reads the pod, writes the result and does the host-side directory work.
 *
 * <ul>
 *   <li>Entries are positional (init containers first, then the others) and taken in order: the first one that
 *       still names a device is this call's; its position names the container (HAMi #2899: an init container without
 *       a device keeps its empty entry, so nothing shifts). Every vendor is read this way, also Hygon, whose own
 *       plugin drops empty entries and so may name the wrong container.</li>
 *   <li>The entry must hold as many devices as kubelet handed this container. The device UUIDs come from the entry,
 *       not from kubelet's virtual IDs (kubelet's choice says only how many).</li>
 *   <li>Every UUID must be a device of this node's plugin: an entry naming another node's device fails the
 *       allocation instead of handing the container a device it cannot open.</li>
 *   <li>The erased value keeps every entry's place ({@code A:;B:;} → {@code ;B:;} → {@code ;;}), for every vendor
 *       (Hygon's plugin drops the emptied entries, Ascend's adds a {@code ;} per call; neither is read by anyone).</li>
 * </ul>
 */
public final class AllocatePolicy {
    /** HAMi's message for a pod without (or without a pending) device entry. */
    public static final String DEVICE_REQUEST_NOT_FOUND = VendorAllocation.DEVICE_REQUEST_NOT_FOUND;
    /** HAMi's message when the entry and kubelet's request differ in size. */
    public static final String DEVICE_NUMBER_NOT_MATCHED = VendorAllocation.DEVICE_NUMBER_NOT_MATCHED;

    private final VendorAllocation vendor;
    private final HamiCoreSettings settings;
    private final String nodeName;

    /** NVIDIA's Allocate with HAMi-core's {@code settings}. */
    public AllocatePolicy(HamiCoreSettings settings, String nodeName) {
        this(VendorAllocation.of(NodeVendor.NVIDIA, settings), settings, nodeName);
    }

    /** {@code vendor}'s Allocate ({@link VendorAllocation#of}). */
    public AllocatePolicy(VendorAllocation vendor, HamiCoreSettings settings, String nodeName) {
        this.vendor = requireNonNull(vendor, "vendor");
        this.settings = requireNonNull(settings, "settings");
        this.nodeName = requireNonNull(nodeName, "nodeName");
    }

    public HamiCoreSettings settings() {
        return settings;
    }

    public VendorAllocation vendor() {
        return vendor;
    }

    /** {@link #decide(PodView, List, Map, String, String)} for a plugin that knows its devices by UUID only. */
    public AllocateDecision decide(PodView pod, List<String> kubeletDeviceIds, Set<String> nodeGpus,
            String libraryFile, String cacheId) {
        requireNonNull(nodeGpus, "nodeGpus");
        Map<String, Long> devices = new LinkedHashMap<>();
        nodeGpus.forEach(uuid -> devices.put(uuid, -1L));
        return decide(pod, kubeletDeviceIds, devices, libraryFile, cacheId);
    }

    /**
     * @param pod the pod this call is for (found by {@link PendingPodPolicy})
     * @param kubeletDeviceIds the virtual device IDs kubelet chose for the container
     * @param nodeDevices the devices this node's plugin lists: UUID → position in the register annotation (Ascend's
     *     physical ID in the simulation; unused by the others)
     * @param libraryFile the file name of HAMi-core's library in {@code <hookPath>/vgpu/} on the host:
     *     {@code libvgpu.so}, or the versioned {@code libvgpu.so.<v>} found there (NVIDIA only)
     * @param cacheId a random UUID for the container's {@code CUDA_DEVICE_MEMORY_SHARED_CACHE} file (NVIDIA only)
     */
    public AllocateDecision decide(PodView pod, List<String> kubeletDeviceIds, Map<String, Long> nodeDevices,
            String libraryFile, String cacheId) {
        requireNonNull(pod, "pod");
        requireNonNull(kubeletDeviceIds, "kubeletDeviceIds");
        requireNonNull(nodeDevices, "nodeDevices");
        requireNonNull(libraryFile, "libraryFile");
        requireNonNull(cacheId, "cacheId");
        String key = vendor.toAllocateKey();
        String value = pod.annotation(key);
        // A pod already allocated keeps its success: a refusal then is for a call that is not its.
        boolean allocated = Annotations.BIND_PHASE_SUCCESS.equals(pod.annotation(Annotations.POD_BIND_PHASE));
        AllocateDecision.Refuse early = vendor.precheck(pod);
        if (early != null) {
            return allocated ? new AllocateDecision.Refuse(early.message(), early.detail(), false) : early;
        }
        if (value == null) {
            return new AllocateDecision.Refuse(vendor.requestNotFound(), "pod " + pod.key() + " has no " + key
                    + " annotation", true);
        }
        List<List<ContainerDevice>> entries;
        try {
            entries = DeviceAllocationCodec.decode(value);
        } catch (IllegalArgumentException e) {
            return new AllocateDecision.Refuse(vendor.requestNotFound(), key + " of " + pod.key() + ": "
                    + PeerText.bound(e.getMessage(), PeerText.VALUE_LIMIT), true);
        }
        int index = DeviceAllocationCodec.nextEntry(entries);
        if (index < 0) {
            // Everything was handed out.
            return new AllocateDecision.Refuse(vendor.noPendingEntry(), "every entry of " + key + " of " + pod.key()
                    + " is handed out (" + PeerText.quote(value) + ")", !allocated);
        }
        List<ContainerView> order = pod.entryOrder();
        if (index >= order.size()) {
            return new AllocateDecision.Refuse(vendor.requestNotFound(), "entry " + index + " of " + key + " of "
                    + pod.key() + " has no container (the pod has " + pod.initContainers().size() + " init and "
                    + pod.containers().size() + " containers)", true);
        }
        ContainerView container = order.get(index);
        List<ContainerDevice> devices = entries.get(index);
        if (devices.size() != kubeletDeviceIds.size()) {
            return new AllocateDecision.Refuse(vendor.numberNotMatched(devices.size(), kubeletDeviceIds.size()),
                    "container " + container.name() + " of " + pod.key() + ": entry " + index + " names "
                    + devices.size() + " device(s), kubelet allocated " + kubeletDeviceIds.size() + " "
                    + kubeletDeviceIds, true);
        }
        AllocateDecision.Refuse unknown = vendor.checkDevices(devices, nodeDevices, nodeName);
        if (unknown != null) {
            return unknown;
        }
        List<List<ContainerDevice>> remaining = DeviceAllocationCodec.erase(entries, index);
        String erased = DeviceAllocationCodec.encode(remaining);
        Map<String, String> after = new LinkedHashMap<>(pod.annotations());
        after.put(key, erased);
        return new AllocateDecision.Allocate(index, container.name(), devices,
                vendor.answer(pod, container, devices, nodeDevices, libraryFile, cacheId), erased,
                !NodeVendor.anyEntryLeft(after));
    }

    /** The host directory mounted at {@code <hookPath>/vgpu}: {@code <hookPath>/vgpu/containers/<podUID>_<name>}. */
    public String containerCacheDirectory(PodView pod, String containerName) {
        return NvidiaAllocation.containerCacheDirectory(settings, pod, containerName);
    }
}
