package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tenantgateway.agent.k8s.Pages;
import io.tenantgateway.common.text.PeerText;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.policy.ContainerView;
import io.tenantgateway.deviceplugin.policy.PendingPodPolicy;
import io.tenantgateway.deviceplugin.policy.PodChoice;
import io.tenantgateway.deviceplugin.policy.PodView;
import io.tenantgateway.hami.Annotations;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Allocate's step 1 against the API, as HAMi's {@code GetPendingPod}: the pod the node lock names (HAMi PR #3095;
 * a malformed lock or a missing pod is an error, no fallback), else HAMi's search for the pending pod on this node
 * ({@link PendingPodPolicy} decides, this reads). Blocks on API calls; an API error is thrown as the client's
 * {@code KubernetesClientException}.
 */
final class PendingPodFinder {
    /** The allocator's log category, as before this part was split out of it. */
    private static final Logger log = LoggerFactory.getLogger(HamiAllocator.class);

    /** The pod step 1 found, and whether the node lock named it. */
    record Found(Pod pod, boolean byLock) {
        Found {
            requireNonNull(pod, "pod");
        }
    }

    private final KubernetesClient client;
    private final String node;
    private final boolean podFieldSelector;
    private final PendingPodPolicy pending;

    /** @param podFieldSelector list pods with {@code spec.nodeName=<node>} ({@link AllocatorConfig#podFieldSelector}) */
    PendingPodFinder(KubernetesClient client, String node, boolean podFieldSelector) {
        this.client = requireNonNull(client, "client");
        this.node = requireNonNull(node, "node");
        this.podFieldSelector = podFieldSelector;
        this.pending = new PendingPodPolicy(node);
    }

    /** Step 1; throws (logged, nothing written) when no pod is found. */
    Found find() throws AllocationException {
        Node current = client.nodes().withName(node).get();
        if (current == null) {
            throw new AllocationException("node " + node + " not found");
        }
        PodChoice choice = pending.fromLock(Annotations.get(current.getMetadata().getAnnotations(),
                Annotations.NODE_LOCK));
        if (choice instanceof PodChoice.Refuse refuse) {
            log.warn("Allocate refused node={}: {}", node, refuse.message());
            throw new AllocationException(refuse.message());
        }
        if (choice instanceof PodChoice.ByLock byLock) {
            Pod pod = client.pods().inNamespace(byLock.namespace()).withName(byLock.name()).get();
            if (pod == null) {
                String why = "pod " + PeerText.bound(byLock.namespace() + "/" + byLock.name(), PeerText.VALUE_LIMIT)
                        + " named by " + Annotations.NODE_LOCK + " on node " + node + " not found";
                log.warn("Allocate refused: {}", why);
                throw new AllocationException(why);
            }
            String wrong = pending.checkLockHolder(view(pod));
            if (wrong != null) {
                log.warn("Allocate refused: {}", wrong);
                throw new AllocationException(wrong);
            }
            return new Found(pod, true);
        }
        Map<PodView, Pod> candidates = new LinkedHashMap<>();
        for (Pod pod : Pages.podsOn(client, node, podFieldSelector)) {
            candidates.put(view(pod), pod);
        }
        Optional<PodView> picked = pending.pick(new ArrayList<>(candidates.keySet()));
        if (picked.isEmpty()) {
            log.warn("Allocate refused: {}", pending.noBindingPod());
            throw new AllocationException(pending.noBindingPod());
        }
        return new Found(candidates.get(picked.get()), false);
    }

    /** {@code pod} as the API has it now; {@code pod} itself when it is gone. */
    Pod reread(Pod pod) {
        Pod fresh = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .get();
        return fresh == null ? pod : fresh;
    }

    /** What the pure policies see of {@code pod}: its identity, phase, annotations and containers' literal env. */
    static PodView view(Pod pod) {
        var metadata = pod.getMetadata();
        var spec = pod.getSpec();
        List<ContainerView> init = spec == null || spec.getInitContainers() == null ? List.of()
                : spec.getInitContainers().stream().map(PendingPodFinder::container).toList();
        List<ContainerView> containers = spec == null || spec.getContainers() == null ? List.of()
                : spec.getContainers().stream().map(PendingPodFinder::container).toList();
        return new PodView(metadata.getNamespace(), metadata.getName(), metadata.getUid() == null ? ""
                : metadata.getUid(), spec == null ? null : spec.getNodeName(),
                pod.getStatus() == null ? null : pod.getStatus().getPhase(),
                metadata.getResourceVersion() == null ? "" : metadata.getResourceVersion(),
                metadata.getAnnotations() == null ? Map.of() : metadata.getAnnotations(), init, containers);
    }

    private static ContainerView container(Container container) {
        Map<String, String> env = new LinkedHashMap<>();
        if (container.getEnv() != null) {
            for (EnvVar var : container.getEnv()) {
                if (var.getName() != null && var.getValue() != null) {
                    env.put(var.getName(), var.getValue());
                }
            }
        }
        return new ContainerView(container.getName(), env);
    }
}
