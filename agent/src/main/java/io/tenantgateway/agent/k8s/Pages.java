package io.tenantgateway.agent.k8s;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Lists read in pages, so no single answer from the tenant API passes {@link ResponseSizeLimit}'s 4 MiB: a node's
 * 110 pods with their managed fields and last-applied annotations reach 5 MiB in one answer, and 50 GPU Nodes with
 * their image lists as much. The page sizes keep a page near 1–2 MiB for objects of a typical size (a pod 5–20 KiB,
 * a Node 20–100 KiB); informers page with the same sizes ({@code withLimit}).
 */
public final class Pages {
    /** Pods per page. */
    public static final long PODS = 100;
    /** Nodes per page. */
    public static final long NODES = 20;

    private Pages() {
    }

    /** Every item, page after page of {@code pageSize} ({@code continue} tokens). */
    public static <T extends HasMetadata> List<T> all(long pageSize, Function<ListOptions, KubernetesResourceList<T>> list) {
        List<T> items = new ArrayList<>();
        String token = null;
        do {
            KubernetesResourceList<T> page = list.apply(new ListOptionsBuilder().withLimit(pageSize)
                    .withContinue(token).build());
            items.addAll(page.getItems());
            token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        return items;
    }

    /**
     * This node's pods, page after page of {@link #PODS}: listed with the field selector {@code spec.nodeName=node}
     * ({@code fieldSelector} false only against fabric8's CRUD mock, which matches nothing with it) and kept only when
     * bound to {@code node} either way.
     */
    public static List<Pod> podsOn(KubernetesClient client, String node, boolean fieldSelector) {
        var pods = fieldSelector ? client.pods().inAnyNamespace().withField("spec.nodeName", node)
                : client.pods().inAnyNamespace();
        List<Pod> onNode = new ArrayList<>();
        for (Pod pod : all(PODS, pods::list)) {
            if (pod.getSpec() != null && node.equals(pod.getSpec().getNodeName())) {
                onNode.add(pod);
            }
        }
        return onNode;
    }
}
