package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiRelease;
import java.util.Optional;

/** HAMi's Kunlun vXPU backend (spec §3.6): memory rounded up to 24576, 49152 or 98304 MiB. */
public final class KunlunVxpuVendor implements Vendor {
    private final String vcountName;
    private final String vmemoryName;
    private final HamiRelease compat;
    /** Quota: trimmed MiB per device, 98304 when the container names none (spec §4); no core resource. */
    private final QuotaNames quota;

    public KunlunVxpuVendor(VendorBlock block, HamiRelease compat) {
        this.vcountName = block.name("resourceVCountName");
        this.vmemoryName = block.name("resourceVMemoryName");
        this.compat = requireNonNull(compat, "compat");
        this.quota = QuotaNames.of(vcountName, vmemoryName, "", 1, "hami.io/xpu-devices-allocated")
                .withDefaultMemory(98304);
    }

    @Override
    public String name() {
        return "XPU";
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        if (!container.hasLimit(vcountName)) {
            return false;
        }
        Optional<Quantity> memory = container.limit(vmemoryName);
        if (memory.isPresent()) {
            long trimmed = trim(memory.get().value());
            if (compat == HamiRelease.V2_9 && !container.hasRequestsMap()) {
                throw VendorException.nilMapPanic();
            }
            container.putLimit(vmemoryName, Quantity.format(trimmed));
            container.putRequest(vmemoryName, Quantity.format(trimmed));
        }
        return true;
    }

    static long trim(long memory) {
        if (memory <= 24576) {
            return 24576;
        }
        return memory <= 49152 ? 49152 : 98304;
    }
}
