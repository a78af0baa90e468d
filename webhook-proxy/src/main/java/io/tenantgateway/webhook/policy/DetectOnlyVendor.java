package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;

/**
 * A HAMi backend whose admission step only detects its resources (Hygon, Cambricon, Metax GPU, Kunlun XPU, Enflame
 * whole-card GCU, Vastai, Biren; AWS Neuron and AMD in v2.9): found when one of its names is in the container's
 * limits; no mutation, no error, and no count made up from memory or core names.
 *
 * @param name HAMi's common word
 * @param limitNames the resource names that make a container this backend's (empty ones match nothing)
 */
public record DetectOnlyVendor(String name, List<String> limitNames) implements Vendor {

    public DetectOnlyVendor {
        requireNonNull(name, "name");
        limitNames = limitNames.stream().filter(n -> !n.isEmpty()).toList();
    }

    @Override
    public Optional<String> validate(ContainerNode container) {
        return Optional.empty();
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
