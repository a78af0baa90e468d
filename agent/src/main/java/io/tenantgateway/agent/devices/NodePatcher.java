package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.agent.k8s.MergePatch;
import java.util.Map;

/**
 * The registrar's calls on its Node: a read, and JSON merge patches naming only the keys given, without a
 * resourceVersion (the scheduler's writes in between are neither overwritten nor fought over). API errors are the
 * client's {@code KubernetesClientException}, for the registrar to classify. Blocks on the API.
 */
final class NodePatcher {
    private final KubernetesClient client;
    private final String nodeName;

    NodePatcher(KubernetesClient client, String nodeName) {
        this.client = requireNonNull(client, "client");
        this.nodeName = requireNonNull(nodeName, "nodeName");
    }

    /** The node as the API has it now, {@code null} when there is none. */
    Node get() {
        return client.nodes().withName(nodeName).get();
    }

    /** Sets {@code annotations} on the node; a {@code null} value removes the key. */
    void patchAnnotations(Map<String, String> annotations) {
        client.nodes().withName(nodeName)
                .patch(PatchContext.of(PatchType.JSON_MERGE), MergePatch.metadata(null, annotations, Map.of()));
    }

    /**
     * Sets {@code quantities} in the status subresource's capacity and allocatable alike; a {@code null} quantity
     * removes the resource.
     *
     * @return the node as the API server answered, {@code null} when it answered nothing
     */
    Node patchCapacity(Map<String, String> quantities) {
        return client.nodes().withName(nodeName).subresource("status")
                .patch(PatchContext.of(PatchType.JSON_MERGE), RegisterEncoding.capacityPatch(quantities));
    }
}
