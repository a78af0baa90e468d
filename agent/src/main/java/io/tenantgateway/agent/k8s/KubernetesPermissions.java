package io.tenantgateway.agent.k8s;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every Kubernetes API permission the agent uses, with the part that needs it and why. The single source for
 * {@code manifests/base/clusterrole.yaml} (a test checks the file equals this list), for the RBAC table in the
 * README, and for {@code tenant-gateway doctor}, which asks the API server about each one.
 */
public final class KubernetesPermissions {

    /**
     * One allowed verb on one resource.
     *
     * @param group API group ("" for core)
     * @param resource plural resource, with {@code /subresource} when it is one
     * @param verb the verb
     * @param part which part of the agent uses it
     * @param why what for
     */
    public record Permission(String group, String resource, String verb, String part, String why) {
        /** {@code group/resource:verb}, for set comparisons and messages. */
        public String key() {
            return (group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb;
        }
    }

    public static final List<Permission> ALL = List.of(
            new Permission("", "nodes", "get", "devices, lock-controller", "read this node's annotations and lock"),
            new Permission("", "nodes", "list", "lock-controller", "informer on this node (field selector by name)"),
            new Permission("", "nodes", "watch", "lock-controller", "informer on this node"),
            new Permission("", "nodes", "patch", "devices, lock-controller",
                    "register annotation, handshake, release hami.io/mutex.lock"),
            new Permission("", "nodes/status", "patch", "devices", "advertise nvidia.com/gpu capacity (mock mode)"),
            new Permission("", "pods", "get", "lock-controller, node-name discovery",
                    "re-read a pod before a compare-and-swap write; find spec.nodeName without NODE_NAME"),
            new Permission("", "pods", "list", "lock-controller, webhook quota", "informer on this node's pods"),
            new Permission("", "pods", "watch", "lock-controller, webhook quota", "informer on this node's pods"),
            new Permission("", "pods", "patch", "lock-controller", "consume device entries, set hami.io/bind-phase"),
            new Permission("", "events", "create", "lock-controller",
                    "GPUAllocated, GPUAllocationFailed, NodeLockReleased"),
            new Permission("", "resourcequotas", "list", "webhook quota", "limits.nvidia.com/gpumem|gpucores"),
            new Permission("", "resourcequotas", "watch", "webhook quota", "limits.nvidia.com/gpumem|gpucores"),
            new Permission("", "secrets", "get", "webhook", "--webhook-tls-secret (resourceNames-restricted)"),
            new Permission("", "secrets", "list", "webhook", "--webhook-tls-secret informer"),
            new Permission("", "secrets", "watch", "webhook", "--webhook-tls-secret informer"),
            new Permission("coordination.k8s.io", "leases", "list", "tunnel", "--count-server-leases"),
            new Permission("coordination.k8s.io", "leases", "watch", "tunnel", "--count-server-leases"),
            new Permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get", "webhook",
                    "--manage-webhook-config: read the CA bundle"),
            new Permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch", "webhook",
                    "--manage-webhook-config: write the CA bundle"),
            new Permission("authorization.k8s.io", "selfsubjectaccessreviews", "create", "doctor",
                    "check these permissions"));

    private KubernetesPermissions() {
    }

    /** Every {@link Permission#key()}. */
    public static Set<String> keys() {
        Set<String> keys = new TreeSet<>();
        ALL.forEach(p -> keys.add(p.key()));
        return keys;
    }
}
