package io.tenantgateway.webhook.policy;

import java.util.Optional;

/** HAMi v2.10's AMD backend (spec §3.9): found by count, memory or cores; core percentage checked; no mutation. */
public final class AmdVendor implements Vendor {
    private final String countName;
    private final String memoryName;
    private final String coreName;

    private final QuotaNames quota;

    public AmdVendor(VendorBlock block) {
        this.countName = block.name("resourceCountName");
        this.memoryName = block.name("resourceMemoryName");
        this.coreName = block.name("resourceCoreName");
        this.quota = QuotaNames.of(countName, memoryName, coreName, 1, "hami.io/amd-devices-allocated")
                .readingLimitsOnly().withDefaultCores(100);
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    /** HAMi's AMD request (limits only): a core percentage outside 1..100 leaves the container uncounted. */
    @Override
    public DeviceRequest request(ContainerNode container) {
        Optional<Quantity> cores = container.limit(coreName);
        return cores.isPresent() && !isPercent(cores.get()) ? DeviceRequest.NONE : quota.request(container);
    }

    @Override
    public String name() {
        return "AMD";
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        boolean count = container.hasLimit(countName);
        Optional<Quantity> cores = container.limit(coreName);
        if (count && cores.isPresent() && !isPercent(cores.get())) {
            throw new VendorException(coreName + " must be an integer percentage between 1 and 100");
        }
        return count || container.hasLimit(memoryName) || cores.isPresent();
    }

    /** A whole number of percent, 1..100 (HAMi's AMD core rule, for admission and for the quota). */
    private static boolean isPercent(Quantity cores) {
        long percent = cores.exactLong().orElse(0L);
        return percent >= 1 && percent <= 100;
    }
}
