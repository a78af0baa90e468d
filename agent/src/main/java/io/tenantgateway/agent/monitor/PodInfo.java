package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * What the monitor needs of a pod on this node: who it is, whether it still runs, its containers in the order HAMi's
 * device annotations list them (init containers first), and its {@code hami.io/vgpu-devices-allocated} value.
 *
 * @param uid the pod's UID, the first part of its containers' cache directory names
 * @param initContainers the init containers' names
 * @param containers the other containers' names ({@code spec.containers})
 * @param terminal whether the pod is {@code Succeeded} or {@code Failed}
 * @param allocated the allocation annotation, when the pod has one
 */
public record PodInfo(String uid, String namespace, String name, List<String> initContainers,
        List<String> containers, boolean terminal, Optional<String> allocated) {
    public PodInfo {
        requireNonNull(uid, "uid");
        requireNonNull(namespace, "namespace");
        requireNonNull(name, "name");
        initContainers = List.copyOf(initContainers);
        containers = List.copyOf(containers);
        requireNonNull(allocated, "allocated");
    }

    /** The index of {@code container}'s entry in HAMi's device annotations, or -1 when it is no {@code spec.containers} entry. */
    public int entryIndex(String container) {
        int index = containers.indexOf(container);
        return index < 0 ? -1 : initContainers.size() + index;
    }
}
