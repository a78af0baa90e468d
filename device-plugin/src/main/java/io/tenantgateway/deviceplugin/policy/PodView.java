package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the Allocate rules need of a pod, read from the API by the caller (no client types here).
 *
 * @param nodeName {@code spec.nodeName}, {@code null} when unbound
 * @param phase {@code status.phase}, {@code null} when unknown
 * @param resourceVersion the version read, for the caller's compare-and-swap writes
 */
public record PodView(String namespace, String name, String uid, String nodeName, String phase,
        String resourceVersion, Map<String, String> annotations, List<ContainerView> initContainers,
        List<ContainerView> containers) {
    public PodView {
        requireNonNull(namespace, "namespace");
        requireNonNull(name, "name");
        requireNonNull(uid, "uid");
        requireNonNull(resourceVersion, "resourceVersion");
        requireNonNull(annotations, "annotations");
        // A null annotation value is an absent one (fabric8's CRUD mock server keeps deleted keys as null).
        java.util.Map<String, String> present = new java.util.LinkedHashMap<>();
        annotations.forEach((k, v) -> {
            if (v != null) {
                present.put(k, v);
            }
        });
        annotations = java.util.Collections.unmodifiableMap(present);
        initContainers = List.copyOf(requireNonNull(initContainers, "initContainers"));
        containers = List.copyOf(requireNonNull(containers, "containers"));
    }

    /** {@code namespace/name}, for messages. */
    public String key() {
        return namespace + "/" + name;
    }

    public String annotation(String key) {
        return Annotations.get(annotations, key);
    }

    /** Init containers first, then the others: the order of the entries of HAMi's device annotations. */
    public List<ContainerView> entryOrder() {
        List<ContainerView> all = new ArrayList<>(initContainers);
        all.addAll(containers);
        return all;
    }
}
