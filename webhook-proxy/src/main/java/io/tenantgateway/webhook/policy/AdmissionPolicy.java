package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.QuotaLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * HAMi's mutating-webhook decisions for pod CREATE requests (HAMi {@code pkg/scheduler/webhook.go}), in HAMi's
 * order:
 *
 * <ol>
 *   <li>an object that is not a readable Pod: errored 400;</li>
 *   <li>no containers: denied "pod has no containers";</li>
 *   <li>another scheduler already named (not ours, and not {@code default-scheduler} while force-overwrite is
 *       on): allowed unchanged, "pod already has different scheduler assigned";</li>
 *   <li>each container (v2.10: init containers first) through every vendor backend, in {@link VendorCatalog}'s
 *       fixed order: validation (v2.10, errored 500), then mutation; the first backend error answers errored
 *       500 with its message; privileged containers are skipped (v2.9) or, when the pod asks for a HAMi resource,
 *       deny it "container &lt;name&gt; is privileged" (v2.10);</li>
 *   <li>a HAMi resource anywhere and a scheduler name configured: {@code spec.schedulerName} set to ours, and
 *       with {@code spec.nodeName} set: denied "pod has node assigned" (with {@code --scheduler-name=""} neither
 *       happens, as in HAMi);</li>
 *   <li>quota: denied "exceeding resource quota";</li>
 *   <li>allowed with the mutated object (the caller turns it into a JSON patch).</li>
 * </ol>
 *
 * <p>Pure: no I/O besides the {@link QuotaLookup}; immutable and thread-safe.
 */
public final class AdmissionPolicy {
    static final String NO_CONTAINERS = "pod has no containers";
    static final String OTHER_SCHEDULER = "pod already has different scheduler assigned";
    static final String NODE_ASSIGNED = "pod has node assigned";
    static final String QUOTA_EXCEEDED = "exceeding resource quota";
    /** controller-runtime's decoder on an AdmissionReview whose {@code request.object} is absent or {@code null}. */
    static final String NO_CONTENT = "there is no content to decode";

    /**
     * The pod annotations vendor backends read or write; a reader that keeps only part of the pod must keep these
     * (and the annotations map itself, whose absence HAMi v2.9's Mthreads backend trips over).
     */
    public static final java.util.Set<String> POD_ANNOTATIONS = java.util.Set.of(AscendVendor.VNPU_MODE_ANNOTATION,
            MetaxSgpuVendor.APP_CLASS_ANNOTATION, MetaxSgpuVendor.QOS_POLICY_ANNOTATION,
            MthreadsVendor.REQUEST_GPU_NUM_ANNOTATION);

    private final PolicyConfig config;
    private final DeviceConfig devices;
    private final ClusterDeviceState clusterState;
    private final List<Vendor> vendors;
    private final QuotaLookup quota;

    public AdmissionPolicy(PolicyConfig config, List<Vendor> vendors, QuotaLookup quota) {
        this(config, null, ClusterDeviceState.DEFAULTS, vendors, quota);
    }

    /** The vendors of {@code devices} with HAMi's scheduler state before any node registered. */
    public AdmissionPolicy(PolicyConfig config, DeviceConfig devices, QuotaLookup quota) {
        this(config, devices, ClusterDeviceState.DEFAULTS, quota);
    }

    /**
     * The vendors of {@code devices} with the scheduler-side state {@code clusterState}. The state can change at run
     * time: the owner builds a new policy then (as for a new device configuration).
     */
    public AdmissionPolicy(PolicyConfig config, DeviceConfig devices, ClusterDeviceState clusterState,
            QuotaLookup quota) {
        this(config, requireNonNull(devices, "devices"), requireNonNull(clusterState, "clusterState"),
                devices.vendors(config, clusterState), quota);
    }

    private AdmissionPolicy(PolicyConfig config, DeviceConfig devices, ClusterDeviceState clusterState,
            List<Vendor> vendors, QuotaLookup quota) {
        this.config = requireNonNull(config, "config");
        this.devices = devices;
        this.clusterState = clusterState;
        this.vendors = List.copyOf(requireNonNull(vendors, "vendors"));
        this.quota = requireNonNull(quota, "quota");
        if (this.vendors.isEmpty()) {
            throw new IllegalArgumentException("vendors: none (expected: at least NVIDIA)");
        }
    }

    public PolicyConfig config() {
        return config;
    }

    /** The device configuration the vendors were built from ({@code null} when built from vendors directly). */
    public DeviceConfig devices() {
        return devices;
    }

    /** The scheduler-side state the vendors were built with ({@link ClusterDeviceState#DEFAULTS} when not given). */
    public ClusterDeviceState clusterState() {
        return clusterState;
    }

    /**
     * Decides on a pod being created.
     *
     * @param object the {@code request.object} of the AdmissionReview (not modified); {@code null} when absent
     * @param requestNamespace the {@code request.namespace}; the pod's own {@code metadata.namespace} is used when
     *     this is empty
     */
    public Decision admit(JsonNode object, String requestNamespace) {
        if (object == null || object.isNull() || object.isMissingNode()) {
            return Decision.errored(400, NO_CONTENT);
        }
        if (!object.isObject()) {
            return Decision.errored(400, "undecodable pod: request.object is " + JsonTypes.describe(object)
                    + " (expected: the Pod being created)");
        }
        ObjectNode copy = ((ObjectNode) object).deepCopy();
        try {
            PodNode pod = new PodNode(copy);
            return decide(pod, namespace(copy, requestNamespace));
        } catch (UndecodablePodException e) {
            return Decision.errored(400, "undecodable pod: " + e.getMessage());
        }
    }

    private Decision decide(PodNode pod, String namespace) {
        List<ContainerNode> containers = pod.containers();
        if (containers.isEmpty()) {
            return Decision.denied(NO_CONTAINERS);
        }
        if (namesOtherScheduler(pod.schedulerName())) {
            return Decision.allowedUnchanged(OTHER_SCHEDULER);
        }
        HamiRelease compat = config.compat();
        List<ContainerNode> initContainers = pod.initContainers();
        List<ContainerNode> toMutate = new ArrayList<>();
        if (compat.mutatesInitContainers()) {
            toMutate.addAll(initContainers);
        }
        toMutate.addAll(containers);

        boolean hasResource = false;
        for (ContainerNode container : toMutate) {
            if (!compat.deniesPrivilegedContainers() && container.privileged()) {
                continue; // v2.9: a privileged container sees every device anyway, so HAMi leaves it alone
            }
            for (Vendor vendor : vendors) {
                if (compat.validatesResourceValues()) {
                    Optional<String> invalid = vendor.validate(container);
                    if (invalid.isPresent()) {
                        return Decision.errored(500, invalid.get());
                    }
                }
                try {
                    hasResource |= vendor.mutate(container, pod);
                } catch (VendorException e) {
                    return Decision.errored(500, e.getMessage()); // HAMi: the first backend error is the answer
                }
            }
        }
        if (compat.deniesPrivilegedContainers() && hasResource) {
            Optional<String> privileged = firstPrivileged(initContainers, containers);
            if (privileged.isPresent()) {
                return Decision.denied("container " + privileged.get() + " is privileged");
            }
        }
        if (hasResource && config.setsSchedulerName()) {
            pod.setSchedulerName(config.schedulerName());
            if (!pod.nodeName().isEmpty()) {
                return Decision.denied(NODE_ASSIGNED);
            }
        }
        QuotaCheck.Result quotaResult = QuotaCheck.check(pod, namespace, vendors, compat, quota);
        if (quotaResult == QuotaCheck.Result.EXCEEDED) {
            return Decision.denied(QUOTA_EXCEEDED);
        }
        if (quotaResult instanceof QuotaCheck.Result.Failed failed) {
            return Decision.errored(500, failed.message());
        }
        return Decision.allowed(pod.tree());
    }

    /**
     * HAMi's condition: a scheduler is named, it is not ours, and it is not {@code default-scheduler} while
     * force-overwrite is on.
     */
    private boolean namesOtherScheduler(String current) {
        if (current.isEmpty() || current.equals(config.schedulerName())) {
            return false;
        }
        return !current.equals(PolicyConfig.KUBERNETES_DEFAULT_SCHEDULER) || !config.forceOverwriteDefaultScheduler();
    }

    private static Optional<String> firstPrivileged(List<ContainerNode> initContainers,
            List<ContainerNode> containers) {
        for (List<ContainerNode> list : List.of(initContainers, containers)) {
            for (ContainerNode container : list) {
                if (container.privileged()) {
                    return Optional.of(container.name());
                }
            }
        }
        return Optional.empty();
    }

    private static String namespace(ObjectNode pod, String requestNamespace) {
        if (requestNamespace != null && !requestNamespace.isEmpty()) {
            return requestNamespace;
        }
        ObjectNode metadata = JsonTypes.object(pod, "metadata", "pod", false);
        return metadata == null ? "" : JsonTypes.string(metadata, "namespace", "metadata");
    }
}
