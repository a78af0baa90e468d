package io.tenantgateway.webhook.quota;

import java.util.Optional;

/**
 * Where the webhook learns a namespace's device quota: the hard limit from a ResourceQuota's
 * {@code limits.<resource>} (e.g. {@code limits.nvidia.com/gpumem}) and how much of it pods already use, in the
 * units HAMi counts (MiB of device memory, percent of cores).
 *
 * <p>Called on a Vert.x event loop for every admission that asks for devices: implementations must answer from
 * memory (an informer cache, a map) and never block. They must be thread-safe.
 */
@FunctionalInterface
public interface QuotaLookup {

    /** No quota anywhere: every pod fits. What the standalone command uses. */
    QuotaLookup NONE = (namespace, resource) -> Optional.empty();

    /**
     * @param namespace the pod's namespace
     * @param resource the resource (its name without the {@code limits.} prefix, e.g. {@code nvidia.com/gpumem}) and
     *                 how pods' use of it is counted
     * @return the quota, or empty when the namespace has none on this resource
     */
    Optional<Quota> find(String namespace, Resource resource);

    /** What a use of a device resource measures: memory in MiB or cores in percent of a device. */
    enum Measure { MEMORY_MIB, CORES }

    /**
     * A device resource a quota may limit, and where HAMi counts what pods already use of it: the devices the
     * scheduler recorded in the vendor's pod annotation ({@code hami.io/vgpu-devices-allocated} for NVIDIA), their
     * memory or their cores.
     *
     * @param name the resource name, e.g. {@code hami.io/dcumem}
     * @param allocatedAnnotation the vendor's allocated-devices pod annotation
     * @param measure which of a device's fields counts
     */
    record Resource(String name, String allocatedAnnotation, Measure measure) {
        public Resource {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("name: " + name + " (expected: a resource name)");
            }
            if (allocatedAnnotation == null || measure == null) {
                throw new IllegalArgumentException("allocatedAnnotation and measure are required");
            }
        }
    }

    /**
     * One namespace's quota on one resource, as HAMi's scheduler keeps it.
     *
     * @param limit the hard limit; 0 means "no limit" (HAMi skips the check)
     * @param used what pods in the namespace already hold
     */
    record Quota(long limit, long used) {
        public Quota {
            if (limit < 0) {
                throw new IllegalArgumentException("limit: " + limit + " (expected: >= 0)");
            }
            if (used < 0) {
                throw new IllegalArgumentException("used: " + used + " (expected: >= 0)");
            }
        }
    }
}
