package io.tenantgateway.agent.deviceplugin;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.tenantgateway.agent.k8s.MergePatch;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.Annotations;
import java.util.List;
import java.util.Map;

/**
 * What the device-plugin ITs read and write around HAMi's allocation on one node of fabric8's mock API server: the
 * node lock, a pod's annotations, events by reason, and the agent's counters in {@code registry}.
 */
record HamiClusterView(KubernetesClient client, PrometheusRegistry registry, String node, String namespace) {

    /** Writes the node lock as HAMi's scheduler does (a JSON merge patch of the node's annotation). */
    void setLock(String value) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                metadataPatch(Map.of(Annotations.NODE_LOCK, value)));
    }

    static String metadataPatch(Map<String, String> annotations) {
        return MergePatch.metadata(null, annotations, Map.of());
    }

    String lock() {
        return Annotations.get(client.nodes().withName(node).get().getMetadata().getAnnotations(),
                Annotations.NODE_LOCK);
    }

    String annotation(String pod, String key) {
        return Annotations.get(client.pods().inNamespace(namespace).withName(pod).get().getMetadata()
                .getAnnotations(), key);
    }

    List<Event> events(String reason) {
        return client.v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }

    double counter(String name, String label, String value) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getPrometheusName().equals(name))
                .map(CounterSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream())
                .filter(d -> value.equals(d.getLabels().get(label))).mapToDouble(d -> d.getValue()).sum();
    }

    /** {@code tenant_gateway_node_lock_releases} for {@code reason}. */
    double lockReleases(ReleaseReason reason) {
        return counter("tenant_gateway_node_lock_releases", "reason", reason.label());
    }
}
