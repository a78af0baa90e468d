package io.tenantgateway.webhook.quota;

import java.util.Optional;

/**
 * Where the webhook learns a namespace's device quota: the hard limit from a ResourceQuota's
 * {@code limits.<resource>} (e.g. {@code limits.nvidia.com/gpumem}) and how much of it pods already use, in the
 * units HAMi counts (MiB of device memory times the memory factor, percent of cores).
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
     * @param resource the resource name without the {@code limits.} prefix, e.g. {@code nvidia.com/gpumem}
     * @return the quota, or empty when the namespace has none on this resource
     */
    Optional<Quota> find(String namespace, String resource);

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
