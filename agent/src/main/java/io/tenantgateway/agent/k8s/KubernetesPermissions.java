package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Every Kubernetes API permission the agent uses, with the use (a flag or mode) that needs it and why. The single
 * source for the ClusterRoles in {@code manifests/} (a test checks that each rendered overlay grants exactly the
 * permissions its DaemonSet's flags use), for the RBAC table in the README, and for {@code tenant-gateway doctor},
 * which asks the API server about the ones the given flags use.
 */
public final class KubernetesPermissions {

    /** What the agent does that needs API access; which ones are on follows from the flags ({@link #uses}). */
    public enum Use {
        /** {@code --enable-lock-controller}, in both allocation modes: watch this node and its pods, release locks. */
        LOCK_CONTROLLER("lock-controller"),
        /**
         * {@code --device-plugin=true}: kubelet's Allocate finds the pod (the node lock's holder, or the pending pod on
         * this node), consumes its entries, sets {@code hami.io/bind-phase}, releases the lock, records Events.
         */
        DEVICE_PLUGIN("device plugin"),
        /** {@code --device-source=mock|nvidia-smi}: register annotation and handshake on this node. */
        DEVICE_REGISTRATION("devices"),
        /** {@code --advertise-gpu-capacity} (default with {@code --device-source=mock}): node status capacity. */
        GPU_CAPACITY("mock capacity"),
        /**
         * {@code --report-node-capacity} (with device registration): the healthy GPUs' memory and cores totals in node
         * status capacity, as HAMi's device config names them.
         */
        NODE_CAPACITY("node capacity"),
        /** No {@code --node-name} / {@code NODE_NAME} (Kamaji's DaemonSet): read {@code spec.nodeName} of our pod. */
        NODE_NAME_DISCOVERY("node-name discovery"),
        /** The webhook, whenever the agent has an API client: GPU quota checks at admission. */
        WEBHOOK_QUOTA("webhook quota"),
        /** The webhook without {@code --device-config} FILE: HAMi's device ConfigMap ({@code --device-config-map}). */
        DEVICE_CONFIG_MAP("webhook device config"),
        /** The webhook, whenever the agent has an API client: report HAMi's own webhook installed next to ours. */
        HAMI_WEBHOOK_CHECK("HAMi webhook check"),
        /**
         * The webhook, whenever the agent has an API client: AWS Neuron cores per device and the Enflame v2.9 factor
         * from Node capacities, cluster-wide.
         */
        WEBHOOK_CLUSTER_DEVICE_STATE("webhook cluster device state"),
        /** {@code --webhook-tls-secret}: the serving certificate from a Secret. */
        WEBHOOK_TLS_SECRET("webhook TLS Secret"),
        /** {@code --webhook-tls-self-managed}: create that Secret when missing, renew its certificates. */
        WEBHOOK_TLS_SELF_MANAGED("webhook TLS self-managed"),
        /** {@code --manage-webhook-config}: keep the webhook configuration's {@code caBundle} current. */
        MANAGED_WEBHOOK_CONFIG("webhook config"),
        /**
         * List this node's pods, to tell which containers on this node are live: the vGPU monitor ({@code --monitor},
         * on with devices) matches HAMi-core's directories to them and removes the directories of pods that are gone.
         */
        NODE_PODS("node pods"),
        /** {@code --count-server-leases}: count konnectivity-server Leases. */
        SERVER_LEASES("tunnel"),
        /** {@code tenant-gateway doctor}: ask the API server about the other permissions. */
        DOCTOR("doctor");

        private final String label;

        Use(String label) {
            this.label = label;
        }

        /** Short name for tables and messages. */
        public String label() {
            return label;
        }
    }

    /**
     * One allowed verb on one resource.
     *
     * @param group API group ("" for core)
     * @param resource plural resource, with {@code /subresource} when it is one
     * @param verb the verb
     * @param uses what needs it: the permission is needed when any of these is on
     * @param why what for
     */
    public record Permission(String group, String resource, String verb, Set<Use> uses, String why) {
        public Permission {
            requireNonNull(group, "group");
            requireNonNull(resource, "resource");
            requireNonNull(verb, "verb");
            uses = Set.copyOf(EnumSet.copyOf(requireNonNull(uses, "uses")));
            requireNonNull(why, "why");
        }

        /** {@code group/resource:verb}, for set comparisons and messages. */
        public String key() {
            return (group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb;
        }

        /** The uses' labels, in declaration order ("devices, lock-controller"). */
        public String part() {
            return EnumSet.copyOf(uses).stream().map(Use::label).collect(Collectors.joining(", "));
        }
    }

    private static Permission permission(String group, String resource, String verb, Set<Use> uses, String why) {
        return new Permission(group, resource, verb, uses, why);
    }

    public static final List<Permission> ALL = List.of(
            permission("", "nodes", "get", EnumSet.of(Use.DEVICE_REGISTRATION, Use.LOCK_CONTROLLER,
                    Use.DEVICE_PLUGIN), "read this node's annotations and lock"),
            permission("", "nodes", "list", EnumSet.of(Use.LOCK_CONTROLLER, Use.WEBHOOK_CLUSTER_DEVICE_STATE),
                    "informer on this node (field selector by name); webhook: every Node's Neuron and Enflame"
                            + " capacity (paged)"),
            permission("", "nodes", "watch", EnumSet.of(Use.LOCK_CONTROLLER, Use.WEBHOOK_CLUSTER_DEVICE_STATE),
                    "informer on this node; webhook: Neuron and Enflame capacity changes"),
            permission("", "nodes", "patch", EnumSet.of(Use.DEVICE_REGISTRATION, Use.LOCK_CONTROLLER,
                    Use.DEVICE_PLUGIN),
                    "register annotation, handshake, release hami.io/mutex.lock (own node only: ValidatingAdmissionPolicy"
                            + " tenant-gateway-own-node)"),
            permission("", "nodes/status", "patch", EnumSet.of(Use.GPU_CAPACITY, Use.NODE_CAPACITY),
                    "advertise nvidia.com/gpu capacity (mock mode); --report-node-capacity: nvidia.com/gpumem and"
                            + " gpucores totals (own node only: ValidatingAdmissionPolicy tenant-gateway-own-node)"),
            permission("", "pods", "get", EnumSet.of(Use.LOCK_CONTROLLER, Use.NODE_NAME_DISCOVERY,
                    Use.DEVICE_PLUGIN), "re-read a pod before a compare-and-swap write, look up a lock holder (the"
                            + " pod Allocate is for); find spec.nodeName without NODE_NAME"),
            permission("", "pods", "list", EnumSet.of(Use.LOCK_CONTROLLER, Use.WEBHOOK_QUOTA, Use.DEVICE_PLUGIN,
                    Use.NODE_PODS), "informer on this node's pods; Allocate's search for the pending pod without a lock;"
                            + " the monitor's containers and cache cleanup"),
            permission("", "pods", "watch", EnumSet.of(Use.LOCK_CONTROLLER, Use.WEBHOOK_QUOTA),
                    "informer on this node's pods"),
            permission("", "pods", "patch", EnumSet.of(Use.DEVICE_PLUGIN),
                    "Allocate: consume device entries, set hami.io/bind-phase"),
            permission("", "events", "create", EnumSet.of(Use.LOCK_CONTROLLER, Use.DEVICE_PLUGIN,
                    Use.WEBHOOK_TLS_SELF_MANAGED, Use.DEVICE_CONFIG_MAP, Use.HAMI_WEBHOOK_CHECK), "NodeLockReleased;"
                            + " GPUAllocated, GPUAllocationFailed (device plugin); WebhookCertificateIssued,"
                            + " WebhookCertificateRenewed, WebhookCARotated, WebhookCertificateFailed;"
                            + " DeviceConfigRejected; HamiWebhookConflict"),
            permission("", "events", "patch", EnumSet.of(Use.LOCK_CONTROLLER, Use.DEVICE_PLUGIN,
                    Use.WEBHOOK_TLS_SELF_MANAGED, Use.DEVICE_CONFIG_MAP, Use.HAMI_WEBHOOK_CHECK),
                    "the same Event again: its count bumped (JSON merge patch), as client-go's correlator does"),
            permission("", "configmaps", "get", EnumSet.of(Use.DEVICE_CONFIG_MAP),
                    "HAMi's device-config.yaml (--device-config-map, resourceNames-restricted): doctor reads it"),
            permission("", "configmaps", "list", EnumSet.of(Use.DEVICE_CONFIG_MAP),
                    "--device-config-map informer (field selector by name)"),
            permission("", "configmaps", "watch", EnumSet.of(Use.DEVICE_CONFIG_MAP),
                    "--device-config-map informer: changes apply live"),
            permission("", "resourcequotas", "list", EnumSet.of(Use.WEBHOOK_QUOTA),
                    "limits.nvidia.com/gpumem|gpucores"),
            permission("", "resourcequotas", "watch", EnumSet.of(Use.WEBHOOK_QUOTA),
                    "limits.nvidia.com/gpumem|gpucores"),
            permission("", "secrets", "get", EnumSet.of(Use.WEBHOOK_TLS_SECRET),
                    "--webhook-tls-secret (resourceNames-restricted)"),
            permission("", "secrets", "list", EnumSet.of(Use.WEBHOOK_TLS_SECRET), "--webhook-tls-secret informer"),
            permission("", "secrets", "watch", EnumSet.of(Use.WEBHOOK_TLS_SECRET), "--webhook-tls-secret informer"),
            permission("", "secrets", "create", EnumSet.of(Use.WEBHOOK_TLS_SELF_MANAGED),
                    "--webhook-tls-self-managed: create the Secret when it is missing (RBAC cannot limit create to a"
                            + " name: a Role in the Secret's namespace, narrowed by ValidatingAdmissionPolicy"
                            + " tenant-gateway-webhook-tls-secret)"),
            permission("", "secrets", "update", EnumSet.of(Use.WEBHOOK_TLS_SELF_MANAGED),
                    "--webhook-tls-self-managed: renew with the read resourceVersion (resourceNames-restricted)"),
            permission("coordination.k8s.io", "leases", "list", EnumSet.of(Use.SERVER_LEASES),
                    "--count-server-leases"),
            permission("coordination.k8s.io", "leases", "watch", EnumSet.of(Use.SERVER_LEASES),
                    "--count-server-leases"),
            permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get",
                    EnumSet.of(Use.MANAGED_WEBHOOK_CONFIG), "--manage-webhook-config: read the CA bundle"),
            permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch",
                    EnumSet.of(Use.MANAGED_WEBHOOK_CONFIG), "--manage-webhook-config: write the CA bundle"),
            permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "list",
                    EnumSet.of(Use.HAMI_WEBHOOK_CHECK), "find HAMi's own webhook (vgpu.hami.io) next to ours"),
            permission("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "watch",
                    EnumSet.of(Use.HAMI_WEBHOOK_CHECK), "report HAMi's webhook when it appears"),
            permission("authorization.k8s.io", "selfsubjectaccessreviews", "create", EnumSet.of(Use.DOCTOR),
                    "check these permissions"));

    private KubernetesPermissions() {
    }


    /** The permissions any of {@code uses} needs, in {@link #ALL}'s order. */
    public static List<Permission> needed(Set<Use> uses) {
        requireNonNull(uses, "uses");
        return ALL.stream().filter(p -> p.uses().stream().anyMatch(uses::contains)).toList();
    }

    /** {@link Permission#key()} of each of {@code permissions}. */
    public static Set<String> keys(List<Permission> permissions) {
        Set<String> keys = new TreeSet<>();
        permissions.forEach(p -> keys.add(p.key()));
        return keys;
    }

    /** Every {@link Permission#key()}. */
    public static Set<String> keys() {
        return keys(ALL);
    }
}
