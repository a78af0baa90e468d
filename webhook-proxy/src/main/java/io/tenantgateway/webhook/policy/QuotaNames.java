package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.Optional;

/**
 * How a vendor takes part in HAMi v2.10's quota check (spec hami-vendors.md §4; HAMi's per-backend
 * {@code GenerateResourceRequests} and {@code GetResourceNames}): its count, memory and core resource names, the
 * memory factor, the pod annotation that records what the scheduler allocated (where HAMi counts a namespace's use),
 * and the few ways the backends read a container:
 *
 * <ul>
 *   <li>each value from the limit, else the request ({@link #limitsOnly}: the limit only);</li>
 *   <li>memory times the factor, in MiB; a memory value that is not a whole number in {@code 0..2^31-1/factor}
 *       leaves the container uncounted, as HAMi rejects it; without one, {@link #defaultMemoryPerDevice};</li>
 *   <li>cores as given, {@link #defaultCoresPerDevice} without them;</li>
 *   <li>per device, or ({@link #perContainer}, Mthreads) the container's total divided by the count.</li>
 * </ul>
 * A count that is not a whole number in {@code 1..2^31-1} counts nothing.
 */
public record QuotaNames(String countName, String memoryName, String coreName, int memoryFactor,
        String allocatedAnnotation, long defaultMemoryPerDevice, long defaultCoresPerDevice, boolean limitsOnly,
        boolean perContainer) {
    static final long MAX_INT32 = Integer.MAX_VALUE;

    public QuotaNames {
        requireNonNull(countName, "countName");
        requireNonNull(memoryName, "memoryName");
        requireNonNull(coreName, "coreName");
        requireNonNull(allocatedAnnotation, "allocatedAnnotation");
        memoryFactor = Math.max(1, memoryFactor);
    }

    /** Limit else request, per device, no defaults. */
    static QuotaNames of(String countName, String memoryName, String coreName, int memoryFactor,
            String allocatedAnnotation) {
        return new QuotaNames(countName, memoryName, coreName, memoryFactor, allocatedAnnotation, 0, 0, false, false);
    }

    /** HAMi's pod annotation for a chip's allocation ({@code hami.io/<common word>-devices-allocated}). */
    static String allocatedAnnotation(String commonWord) {
        return "hami.io/" + commonWord + "-devices-allocated";
    }

    QuotaNames withDefaultMemory(long perDevice) {
        return new QuotaNames(countName, memoryName, coreName, memoryFactor, allocatedAnnotation, perDevice,
                defaultCoresPerDevice, limitsOnly, perContainer);
    }

    QuotaNames withDefaultCores(long perDevice) {
        return new QuotaNames(countName, memoryName, coreName, memoryFactor, allocatedAnnotation,
                defaultMemoryPerDevice, perDevice, limitsOnly, perContainer);
    }

    QuotaNames readingLimitsOnly() {
        return new QuotaNames(countName, memoryName, coreName, memoryFactor, allocatedAnnotation,
                defaultMemoryPerDevice, defaultCoresPerDevice, true, perContainer);
    }

    QuotaNames perContainerTotals() {
        return new QuotaNames(countName, memoryName, coreName, memoryFactor, allocatedAnnotation,
                defaultMemoryPerDevice, defaultCoresPerDevice, limitsOnly, true);
    }

    Vendor.QuotaResources resources() {
        if (countName.isEmpty() || (memoryName.isEmpty() && coreName.isEmpty())) {
            return Vendor.QuotaResources.NONE;
        }
        return new Vendor.QuotaResources(memoryName.isEmpty() ? null : memoryName,
                coreName.isEmpty() ? null : coreName, memoryFactor, allocatedAnnotation);
    }

    Vendor.DeviceRequest request(ContainerNode container) {
        long count = read(container, countName).flatMap(Quantity::exactLong).orElse(0L);
        if (count <= 0 || count > MAX_INT32) {
            return Vendor.DeviceRequest.NONE;
        }
        long memory = defaultMemoryPerDevice;
        Optional<Quantity> memoryValue = read(container, memoryName);
        if (memoryValue.isPresent()) {
            Optional<Long> whole = memoryValue.get().exactLong();
            if (whole.isEmpty() || whole.get() < 0 || whole.get() > MAX_INT32 / memoryFactor) {
                return Vendor.DeviceRequest.NONE;
            }
            memory = whole.get() * memoryFactor;
        }
        long cores = read(container, coreName).map(q -> q.exactLong().orElse(0L)).orElse(defaultCoresPerDevice);
        if (perContainer) {
            return new Vendor.DeviceRequest(count, memory / count, cores / count);
        }
        return new Vendor.DeviceRequest(count, memory, cores);
    }

    private Optional<Quantity> read(ContainerNode container, String resource) {
        if (resource.isEmpty()) {
            return Optional.empty();
        }
        return limitsOnly ? container.limit(resource) : container.limitOrRequest(resource);
    }
}
