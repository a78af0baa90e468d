package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tenantgateway.agent.k8s.MergePatch;
import java.util.Map;

/**
 * The allocator's writes to a pod: merge patches of annotations that carry the resourceVersion the pod was read at,
 * so a write over a change made since is a 409 (a compare-and-swap). Blocks on the API call.
 */
final class PodPatcher {
    private final KubernetesClient client;

    PodPatcher(KubernetesClient client) {
        this.client = requireNonNull(client, "client");
    }

    /** Sets {@code annotations} (a {@code null} value removes the key) on {@code pod} as it was read; the answer. */
    Pod patch(Pod pod, Map<String, String> annotations) {
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .patch(PatchContext.of(PatchType.JSON_MERGE), MergePatch.annotations(
                        pod.getMetadata().getResourceVersion(), annotations));
    }

    /** {@code namespace/name}, for logs and texts. */
    static String key(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
}
