package io.tenantgateway.deviceplugin;

import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import java.util.List;
import java.util.Optional;

/**
 * What answers kubelet's Allocate and GetPreferredAllocation: the agent's HAMi allocator (finds the pod, decides
 * with the policy classes, writes the pod and node). Called on the plugin's single call thread, one call at a time
 * (so one allocation at a time per node), and allowed to block on API calls there.
 */
public interface Allocator {
    /**
     * One container's allocation: kubelet calls Allocate once per container with the virtual IDs it chose.
     *
     * @throws AllocationException with the text kubelet reports (the pod's admission fails with it)
     */
    ContainerAllocation allocate(List<String> deviceIds) throws AllocationException;

    /**
     * The preferred virtual IDs for the {@code index}-th container request of one GetPreferredAllocation call, or
     * empty to leave the choice to kubelet.
     */
    Optional<List<String>> preferred(int index, List<String> available, List<String> mustInclude, int size);
}
