package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.VirtualDeviceIds;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * HAMi's GetPreferredAllocation (HAMi #1741): kubelet picks the virtual IDs for a container itself unless the
 * plugin prefers some, and may then hand out several replicas of one GPU for a two-GPU request while the scheduler
 * chose two different GPUs. The preference names, for each device of the container's pending entry, an available
 * replica of exactly that GPU. Pure.
 */
public final class PreferredAllocationPolicy {
    private PreferredAllocationPolicy() {
    }

    /**
     * @param available the virtual IDs kubelet may choose from
     * @param mustInclude IDs kubelet already chose (they count towards the entry's GPUs)
     * @param entry the container's entry (its GPUs, in the scheduler's order)
     * @param size how many IDs kubelet wants
     * @return the IDs, or empty when the entry cannot be matched (kubelet then chooses itself)
     */
    public static Optional<List<String>> select(List<String> available, List<String> mustInclude,
            List<ContainerDevice> entry, int size) {
        requireNonNull(available, "available");
        requireNonNull(mustInclude, "mustInclude");
        requireNonNull(entry, "entry");
        if (size < 0 || entry.size() < size) {
            return Optional.empty();
        }
        Set<String> required = new LinkedHashSet<>(mustInclude);
        Map<String, Integer> requiredPerGpu = new HashMap<>();
        for (String id : required) {
            requiredPerGpu.merge(VirtualDeviceIds.physicalId(id), 1, Integer::sum);
        }
        Map<String, List<String>> availablePerGpu = new LinkedHashMap<>();
        for (String id : available) {
            if (!required.contains(id)) {
                availablePerGpu.computeIfAbsent(VirtualDeviceIds.physicalId(id), k -> new ArrayList<>()).add(id);
            }
        }
        List<String> selected = new ArrayList<>(required);
        for (ContainerDevice device : entry.subList(0, size)) {
            Integer alreadyRequired = requiredPerGpu.get(device.uuid());
            if (alreadyRequired != null && alreadyRequired > 0) {
                requiredPerGpu.put(device.uuid(), alreadyRequired - 1);
                continue;
            }
            List<String> candidates = availablePerGpu.getOrDefault(device.uuid(), List.of());
            if (candidates.isEmpty()) {
                return Optional.empty();
            }
            selected.add(candidates.remove(0));
        }
        return selected.size() == size ? Optional.of(List.copyOf(selected)) : Optional.empty();
    }
}
