package io.tenantgateway.webhook.policy;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The pod being admitted, as a mutable view over its JSON tree (a private copy the policy owns). Only the fields
 * HAMi's webhook reads or writes are exposed; everything else passes through untouched, so the JSON patch
 * computed from the original to this tree contains exactly HAMi's changes.
 */
public final class PodNode {
    private final ObjectNode pod;
    private final ObjectNode spec;

    PodNode(ObjectNode pod) {
        this.pod = pod;
        ObjectNode existing = JsonTypes.object(pod, "spec", "pod", false);
        // A pod without spec has no containers; keep the tree untouched so "pod has no containers" stays patch-free.
        this.spec = existing;
    }

    ObjectNode tree() {
        return pod;
    }

    public String name() {
        ObjectNode metadata = JsonTypes.object(pod, "metadata", "pod", false);
        if (metadata == null) {
            return "";
        }
        String name = JsonTypes.string(metadata, "name", "metadata");
        return name.isEmpty() ? JsonTypes.string(metadata, "generateName", "metadata") : name;
    }

    public List<ContainerNode> containers() {
        return containerList("containers");
    }

    public List<ContainerNode> initContainers() {
        return containerList("initContainers");
    }

    public String schedulerName() {
        return spec == null ? "" : JsonTypes.string(spec, "schedulerName", "spec");
    }

    public void setSchedulerName(String schedulerName) {
        requireSpec().put("schedulerName", schedulerName);
    }

    public String nodeName() {
        return spec == null ? "" : JsonTypes.string(spec, "nodeName", "spec");
    }

    /** HAMi sets {@code runtimeClassName} only when the pod has none ({@code nil} in Go: absent or null). */
    public boolean hasRuntimeClassName() {
        if (spec == null) {
            return false;
        }
        JsonNode value = spec.get("runtimeClassName");
        return value != null && !value.isNull();
    }

    /** A pod annotation, or {@code null} when absent. */
    public String annotation(String key) {
        ObjectNode annotations = annotations(false);
        if (annotations == null || annotations.get(key) == null || annotations.get(key).isNull()) {
            return null;
        }
        return JsonTypes.string(annotations, key, "metadata.annotations");
    }

    /** Whether the pod has an annotations map (Go: non-nil; writing into a nil one panics in HAMi v2.9). */
    public boolean hasAnnotations() {
        return annotations(false) != null;
    }

    /** Sets a pod annotation, creating {@code metadata} and {@code annotations} when absent. */
    public void putAnnotation(String key, String value) {
        annotations(true).put(key, value);
    }

    private ObjectNode annotations(boolean create) {
        ObjectNode metadata = JsonTypes.object(pod, "metadata", "pod", create);
        return metadata == null ? null : JsonTypes.object(metadata, "annotations", "metadata", create);
    }

    public void setRuntimeClassName(String runtimeClassName) {
        requireSpec().put("runtimeClassName", runtimeClassName);
    }

    private ObjectNode requireSpec() {
        if (spec == null) {
            throw new IllegalStateException("pod has no spec");
        }
        return spec;
    }

    private List<ContainerNode> containerList(String field) {
        if (spec == null) {
            return List.of();
        }
        JsonNode list = spec.get(field);
        if (list == null || list.isNull()) {
            return List.of();
        }
        if (!list.isArray()) {
            throw new UndecodablePodException("spec." + field + ": expected an array, got " + JsonTypes.describe(list));
        }
        List<ContainerNode> containers = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode container = list.get(i);
            String path = "spec." + field + "[" + i + "]";
            if (!container.isObject()) {
                throw new UndecodablePodException(path + ": expected an object, got " + JsonTypes.describe(container));
            }
            containers.add(new ContainerNode((ObjectNode) container, path));
        }
        return containers;
    }
}
