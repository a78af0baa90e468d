package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * A HAMi backend whose admission step only detects its resources (Hygon, Cambricon, Metax GPU, Kunlun XPU, Enflame
 * whole-card GCU, Vastai, Biren; AWS Neuron and AMD in v2.9): found when one of its names is in the container's
 * limits; no mutation, no error, and no count made up from memory or core names.
 *
 * @param name HAMi's common word
 * @param limitNames the resource names that make a container this backend's (empty ones match nothing)
 * @param quota how it takes part in the v2.10 quota check ({@code null}: it does not)
 */
public record DetectOnlyVendor(String name, List<String> limitNames, QuotaNames quota) implements Vendor {

    public DetectOnlyVendor {
        requireNonNull(name, "name");
        limitNames = limitNames.stream().filter(n -> !n.isEmpty()).toList();
    }

    /** A backend that takes no part in the quota check. */
    public DetectOnlyVendor(String name, List<String> limitNames) {
        this(name, limitNames, null);
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        for (String resource : limitNames) {
            if (container.hasLimit(resource)) {
                return true;
            }
        }
        return false;
    }
}
