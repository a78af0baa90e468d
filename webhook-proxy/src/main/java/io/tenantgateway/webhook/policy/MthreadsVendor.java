package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiRelease;
import java.util.Optional;
import java.util.Set;

/** HAMi's Mthreads backend (spec §3.3): sGPU core/memory defaults and the valid memory sizes. */
public final class MthreadsVendor implements Vendor {
    public static final String REQUEST_GPU_NUM_ANNOTATION = "mthreads.com/request-gpu-num";
    static final long CORES_PER_GPU = 16;
    static final long MEMORY_PER_GPU = 96;
    private static final Set<Long> VALID_MEMORY = Set.of(2L, 4L, 8L, 16L, 32L, 64L, 96L);

    private final String countName;
    private final String memoryName;
    private final String coreName;
    /** HAMi's {@code MemoryFactor}: one unit of sGPU memory is 512 MiB. */
    static final int MEMORY_FACTOR = 512;

    private final HamiRelease compat;
    /** Quota: memory and cores are the container's totals, counted per device (spec §4). */
    private final QuotaNames quota;

    public MthreadsVendor(VendorBlock block, HamiRelease compat) {
        this.countName = block.name("resourceCountName");
        this.memoryName = block.name("resourceMemoryName");
        this.coreName = block.name("resourceCoreName");
        this.compat = requireNonNull(compat, "compat");
        this.quota = QuotaNames.of(countName, memoryName, coreName, MEMORY_FACTOR,
                "hami.io/mthreads-vgpu-devices-allocated").perContainerTotals();
    }

    @Override
    public QuotaNames quotaNames() {
        return quota;
    }

    @Override
    public String name() {
        return "Mthreads";
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        Optional<Quantity> count = container.limit(countName);
        if (count.isEmpty() && compat == HamiRelease.V2_10) {
            count = container.request(countName);
        }
        if (count.isEmpty()) {
            return false;
        }
        long n = count.get().value();
        if (compat == HamiRelease.V2_10 && n <= 0) {
            throw new VendorException(countName + " must be greater than 0");
        }
        if (n > 1) {
            putCoreAndMemory(container, n);
            if (compat == HamiRelease.V2_9 && !pod.hasAnnotations()) {
                throw VendorException.nilMapPanic();
            }
            pod.putAnnotation(REQUEST_GPU_NUM_ANNOTATION, Long.toString(n));
            return true;
        }
        Optional<Quantity> memory = container.limit(memoryName);
        if (memory.isEmpty()) {
            putCoreAndMemory(container, n);
        } else if (!VALID_MEMORY.contains(memory.get().value())) {
            throw new VendorException(compat == HamiRelease.V2_9
                    ? "sGPU memory request value is invalid, valid values are [1, 2, 4, 8, 16, 32, 64, 96]"
                    : "sGPU memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]");
        }
        return true;
    }

    private void putCoreAndMemory(ContainerNode container, long n) {
        if (!coreName.isEmpty()) {
            container.putLimit(coreName, Quantity.format(n * CORES_PER_GPU));
        }
        if (!memoryName.isEmpty()) {
            container.putLimit(memoryName, Quantity.format(n * MEMORY_PER_GPU));
        }
    }
}
