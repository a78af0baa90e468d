package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiRelease;
import java.util.Optional;

/**
 * HAMi's Enflame shared-GCU backend (spec §3.7). v2.10: DRS slices ({@code drs-gcu}) or memory/core shares,
 * validated and mirrored between limits and requests. v2.9: {@code vgcu} with a percentage rounded to the slices
 * of the last Enflame node the scheduler registered ({@code sharedGcuFactor}; 0 before any, which leaves
 * single-device requests unchanged; here from {@link ClusterDeviceState#enflameSharedFactor()}).
 */
public final class EnflameSharedVendor implements Vendor {
    public static final String SHARED_GCU = "enflame.com/shared-gcu";
    static final String FALLBACK_DRS = "enflame.com/drs-gcu";
    static final String FALLBACK_MEMORY = "enflame.com/gcu-memory";
    static final String FALLBACK_CORE = "enflame.com/gcu-core";

    private final HamiRelease compat;
    private final String drsName;
    private final String memoryName;
    private final String coreName;
    private final String vgcuName;
    private final String percentageName;
    private final long sharedGcuFactor;

    public EnflameSharedVendor(VendorBlock block, HamiRelease compat, long sharedGcuFactor) {
        this.compat = requireNonNull(compat, "compat");
        this.drsName = block.firstOf(FALLBACK_DRS, "resourceNameDRSGCU", "resourceNameVGCU");
        this.memoryName = block.firstOf(FALLBACK_MEMORY, "resourceNameGCUMemory");
        this.coreName = block.firstOf(FALLBACK_CORE, "resourceNameGCUCore");
        this.vgcuName = block.name("resourceNameVGCU");
        this.percentageName = block.name("resourceNameVGCUPercentage");
        this.sharedGcuFactor = sharedGcuFactor;
    }

    @Override
    public String name() {
        return "Enflame";
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        return compat == HamiRelease.V2_9 ? mutateV29(container) : mutateDrs(container);
    }

    private boolean mutateDrs(ContainerNode container) {
        Optional<Quantity> drs = container.limitOrRequest(drsName);
        if (drs.isPresent()) {
            if (drs.get().value() <= 0) {
                throw new VendorException(drsName + " must be greater than 0");
            }
            mirror(container, drsName, drs.get());
            return true;
        }
        Optional<Quantity> memory = container.limitOrRequest(memoryName);
        Optional<Quantity> core = container.limitOrRequest(coreName);
        if (memory.isEmpty() && core.isEmpty()) {
            return false;
        }
        if (memory.isPresent() && memory.get().value() <= 0) {
            throw new VendorException(memoryName + " must be greater than 0");
        }
        if (core.isPresent() && (core.get().value() <= 0 || core.get().value() > 100)) {
            throw new VendorException(coreName + " must be in range (0,100]");
        }
        memory.ifPresent(q -> mirror(container, memoryName, q));
        core.ifPresent(q -> mirror(container, coreName, q));
        return true;
    }

    /** Copies the value into whichever of limits and requests lacks it. */
    private static void mirror(ContainerNode container, String resource, Quantity value) {
        if (!container.hasLimit(resource)) {
            container.putLimit(resource, value.toString());
        }
        if (container.request(resource).isEmpty()) {
            container.putRequest(resource, value.toString());
        }
    }

    private boolean mutateV29(ContainerNode container) {
        Optional<Quantity> vgcu = container.limit(vgcuName);
        if (vgcu.isEmpty()) {
            return false;
        }
        long n = vgcu.get().value();
        if (n > 1) {
            if (!percentageName.isEmpty()) {
                container.putLimit(percentageName, Quantity.format(100));
            }
            container.putLimit(SHARED_GCU, Quantity.format(sharedGcuFactor * n));
            return true;
        }
        if (sharedGcuFactor <= 0) {
            return true;
        }
        long percentage = Math.max(1, container.limit(percentageName).map(Quantity::value).orElse(100L));
        double slice = 100.0 / sharedGcuFactor;
        long i = sliceIndex(percentage, slice, sharedGcuFactor);
        if (i >= 0) {
            if (!container.hasRequestsMap()) {
                throw VendorException.nilMapPanic();
            }
            String rounded = Quantity.format((long) (slice * (i + 1)));
            container.putLimit(percentageName, rounded);
            container.putRequest(percentageName, rounded);
            container.putLimit(SHARED_GCU, Quantity.format(i + 1));
        }
        return true;
    }

    /**
     * HAMi's loop {@code for i := 0; i < factor; i++ { if slice*i < p && p <= slice*(i+1) ... break }}: the first
     * (and only: the intervals do not overlap) {@code i}, or -1. Found from {@code p / slice} and checked with
     * HAMi's own comparisons on its neighbours, so a factor learnt from a Node's capacity costs no loop over every
     * slice.
     */
    static long sliceIndex(long percentage, double slice, long factor) {
        long guess = (long) Math.ceil(percentage / slice) - 1;
        for (long i = Math.max(0, guess - 1); i <= guess + 1 && i < factor; i++) {
            if (slice * i < percentage && percentage <= slice * (i + 1)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * v2.10's quota part: DRS slices count as memory (HAMi's request carries the slice count as its memory), else
     * the memory and core shares (rounded up, limit else request); one device. v2.9 checks NVIDIA only.
     */
    @Override
    public QuotaResources quotaResources() {
        return compat == HamiRelease.V2_10
                ? new QuotaResources(memoryName, coreName, 1, "hami.io/enflame-vgpu-devices-allocated")
                : QuotaResources.NONE;
    }

    @Override
    public DeviceRequest request(ContainerNode container) {
        Optional<Long> drs = container.limitOrRequest(drsName).flatMap(Quantity::exactLong);
        if (drs.isPresent() && drs.get() > 0) {
            return drs.get() > QuotaNames.MAX_INT32 ? DeviceRequest.NONE : new DeviceRequest(1, drs.get(), 0);
        }
        Optional<Quantity> memory = container.limitOrRequest(memoryName);
        Optional<Quantity> core = container.limitOrRequest(coreName);
        if (memory.isEmpty() && core.isEmpty()) {
            return DeviceRequest.NONE;
        }
        long memoryValue = memory.map(Quantity::value).orElse(0L);
        long coreValue = core.map(Quantity::value).orElse(0L);
        if (memoryValue > QuotaNames.MAX_INT32 || coreValue > QuotaNames.MAX_INT32) {
            return DeviceRequest.NONE;
        }
        return new DeviceRequest(1, memoryValue, coreValue);
    }
}
