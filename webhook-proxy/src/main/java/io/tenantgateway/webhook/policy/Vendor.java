package io.tenantgateway.webhook.policy;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One accelerator vendor backend's part of HAMi's admission webhook (HAMi's {@code Devices.MutateAdmission} plus the
 * resource names its quota check uses). Adding a vendor is its configuration block plus one implementation of
 * this interface; the decision order, the privileged rule, scheduler assignment, quota arithmetic and patching
 * stay in {@link AdmissionPolicy}.
 *
 * <p>Implementations are immutable and thread-safe; the containers they receive belong to one admission.
 */
public interface Vendor {

    /** HAMi's common word for the vendor, e.g. {@code NVIDIA}. */
    String name();

    /**
     * Checks a container before it is mutated (HAMi v2.10 does this first in {@code MutateAdmission}).
     *
     * @return HAMi's error text when a value is invalid; the pod is then answered errored 500 with it
     *         (none by default: most vendors check nothing)
     */
    default Optional<String> validate(ContainerNode container) {
        return Optional.empty();
    }

    /**
     * Mutates one container (limits, env) and, where the vendor does so, the pod (runtime class).
     *
     * @return whether the container asks for this vendor's devices after mutation ("found")
     * @throws VendorException HAMi's error for this container; the pod is then answered errored 500 with it
     */
    boolean mutate(ContainerNode container, PodNode pod);

    /**
     * How the vendor takes part in the v2.10 quota check, as its resource names; {@code null} (the default): it does
     * not. {@link #quotaResources} and {@link #request} follow from it unless a vendor overrides them.
     */
    default QuotaNames quotaNames() {
        return null;
    }

    /**
     * The backends the quota check asks about {@code pod}: this one (the default). A group of per-chip backends
     * ({@link ChipVendors}) answers with only the chips the pod's containers name, so that the check costs the same
     * however many chips are configured.
     */
    default List<Vendor> quotaVendors(PodNode pod) {
        return List.of(this);
    }

    /**
     * The resources a namespace's ResourceQuota limits ({@code limits.<name>}), the memory factor and where the
     * scheduler records what it allocated; none when the vendor takes no part in the quota check.
     */
    default QuotaResources quotaResources() {
        QuotaNames names = quotaNames();
        return names == null ? QuotaResources.NONE : names.resources();
    }

    /**
     * What a (mutated) container asks for, as HAMi's scheduler counts it for the quota check: memory in MiB (the
     * memory factor applied), cores in percent, per device.
     */
    default DeviceRequest request(ContainerNode container) {
        QuotaNames names = quotaNames();
        return names == null ? DeviceRequest.NONE : names.request(container);
    }

    /**
     * Names of the memory and core resources a quota may limit ({@code null} when the vendor has none), the factor
     * HAMi multiplies a memory quota by before comparing it with requests in MiB, and the pod annotation in which the
     * scheduler records the vendor's allocated devices (what a namespace already uses).
     */
    record QuotaResources(String memoryResource, String coreResource, int memoryFactor, String allocatedAnnotation) {
        public static final QuotaResources NONE = new QuotaResources(null, null, 1, "");

        public QuotaResources {
            if (memoryFactor < 1) {
                throw new IllegalArgumentException("memoryFactor: " + memoryFactor + " (expected: >= 1)");
            }
            Objects.requireNonNull(allocatedAnnotation, "allocatedAnnotation");
        }
    }

    /**
     * A container's device request: number of devices, memory (MiB) and cores per device as the scheduler counts
     * them.
     */
    record DeviceRequest(long count, long memoryPerDevice, long coresPerDevice) {
        public static final DeviceRequest NONE = new DeviceRequest(0, 0, 0);
    }
}
