package io.tenantgateway.deviceplugin.policy;

import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.hami.AscendRuntimeInfo;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.NodeVendor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Project-HAMi/ascend-device-plugin v1.4.0 for one chip, simulated (device-plugin/VENDOR-PLUGINS.md §2.5, §2.6):
 * replicas {@code <chip UUID>-<i>}; the plugin's error texts, as kubelet sees them (wrapped by the step that failed).
 *
 * <p>The answer:
 * <ul>
 *   <li>{@code ASCEND_VISIBLE_DEVICES}: the chips' physical IDs in entry order, joined by {@code ,}. The simulated
 *       physical ID is the chip's {@code index} in the register annotation (its position in the plugin's list).</li>
 *   <li>Template mode (pod annotation {@code huawei.com/vnpu-mode} is not {@code hami-core}): {@code ASCEND_VNPU_SPECS}
 *       = the first non-empty {@code temp} of the entry's chips in {@code huawei.com/<CW>}, only when there is one (a
 *       template slice; a whole chip has none).</li>
 *   <li>hami-core mode: {@code NPU_MEM_QUOTA} (the first chip's {@code memory}, when present), {@code NPU_PRIORITY}
 *       (its {@code core}, when present), {@code NPU_GLOBAL_SHM_PATH}, {@code NPU_LOCAL_SHM_PATH}. The plugin's
 *       mounts (the driver, npu-smi, {@code /usr/local/hami-vnpu-core}, the shared regions) are host paths a
 *       simulated node does not have, so they are left out, as is the per-container directory it creates.</li>
 * </ul>
 */
final class AscendAllocation extends VendorAllocationBase {
    /** Pod annotation choosing HAMi-core's vNPU sharing instead of templates. */
    static final String VNPU_MODE = "huawei.com/vnpu-mode";
    static final String HAMI_CORE = "hami-core";

    private final String runtimeKey;

    AscendAllocation(NodeVendor vendor) {
        super(vendor);
        this.runtimeKey = AscendRuntimeInfo.annotationKey(vendor.commonWord());
    }

    /** {@code <chip UUID>-<i>}. */
    @Override
    public String virtualDeviceId(String deviceId, int replica) {
        return deviceId + "-" + replica;
    }

    /** Step 2: {@code huawei.com/<CW>} must be there and read as JSON. */
    @Override
    public AllocateDecision.Refuse precheck(PodView pod) {
        String value = pod.annotation(runtimeKey);
        if (value == null) {
            return new AllocateDecision.Refuse("build runtimeInfo lookup: annotation " + runtimeKey + " not set",
                    "HAMi's scheduler writes it at Filter", true);
        }
        try {
            AscendRuntimeInfo.decode(value);
        } catch (IllegalArgumentException e) {
            // The plugin echoes the value whole; a pod's annotation may be 256 KiB: escaped and cut (PeerText).
            return new AllocateDecision.Refuse("build runtimeInfo lookup: annotation " + runtimeKey + " value "
                    + PeerText.bound(value, PeerText.VALUE_LIMIT) + " invalid: " + PeerText.bound(e.getMessage(), PeerText.VALUE_LIMIT),
                    "", true);
        }
        return null;
    }

    @Override
    public String requestNotFound() {
        return "decode device annotations: device " + vendor().commonWord() + " not found in pod annotations";
    }

    @Override
    public String noPendingEntry() {
        return "get next container devices: no pending device allocation found";
    }

    @Override
    public String numberNotMatched(int annotation, int request) {
        return DEVICE_NUMBER_NOT_MATCHED + ": annotation has " + annotation + ", request has " + request;
    }

    @Override
    public AllocateDecision.Refuse checkDevices(List<ContainerDevice> devices, Map<String, Long> nodeDevices,
            String nodeName) {
        for (ContainerDevice device : devices) {
            if (!nodeDevices.containsKey(device.uuid())) {
                String uuid = PeerText.bound(device.uuid(), PeerText.VALUE_LIMIT);
                return new AllocateDecision.Refuse("build container allocate response: unknown uuid: " + uuid,
                        uuid + " is not a " + vendor().commonWord() + " of node " + nodeName, true);
            }
        }
        return null;
    }

    @Override
    public ContainerAllocation answer(PodView pod, ContainerView container, List<ContainerDevice> devices,
            Map<String, Long> nodeDevices, String libraryFile, String cacheId) {
        Map<String, AscendRuntimeInfo> lookup = AscendRuntimeInfo.lookup(AscendRuntimeInfo.decode(
                pod.annotation(runtimeKey))); // checked by precheck
        StringBuilder visible = new StringBuilder();
        String spec = "";
        for (ContainerDevice device : devices) {
            if (visible.length() > 0) {
                visible.append(',');
            }
            visible.append(nodeDevices.get(device.uuid()));
            AscendRuntimeInfo info = lookup.get(device.uuid());
            if (info != null && spec.isEmpty()) {
                spec = info.temp();
            }
        }
        Map<String, String> envs = new LinkedHashMap<>();
        envs.put("ASCEND_VISIBLE_DEVICES", visible.toString());
        if (HAMI_CORE.equals(pod.annotation(VNPU_MODE))) {
            Long memory = firstPresent(devices, lookup, true);
            Long core = firstPresent(devices, lookup, false);
            if (memory != null) {
                envs.put("NPU_MEM_QUOTA", Long.toString(memory));
            }
            if (core != null) {
                envs.put("NPU_PRIORITY", Long.toString(core));
            }
            envs.put("NPU_GLOBAL_SHM_PATH", "/hami-shared-region/" + nodeDevices.get(devices.get(0).uuid())
                    + "_global_registry");
            envs.put("NPU_LOCAL_SHM_PATH", "/hami-vnpu-shmem/vnpu_local_shmem");
        } else if (!spec.isEmpty()) {
            envs.put("ASCEND_VNPU_SPECS", spec);
        }
        return new ContainerAllocation(envs, List.of());
    }

    /** The plugin's {@code memories[0]} / {@code cores[0]}: the first value present among the entry's chips. */
    private static Long firstPresent(List<ContainerDevice> devices, Map<String, AscendRuntimeInfo> lookup,
            boolean memory) {
        for (ContainerDevice device : devices) {
            AscendRuntimeInfo info = lookup.get(device.uuid());
            Long value = info == null ? null : memory ? info.memory() : info.core();
            if (value != null) {
                return value;
            }
        }
        return null;
    }
}
