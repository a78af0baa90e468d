package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

/**
 * How a vendor takes part in HAMi v2.10's quota check (spec hami-vendors.md §4): its count, memory and core resource
 * names, its memory factor, and the memory per device counted when a container names none ({@code 0}: none).
 * Requests are read as NVIDIA's: per device from the limit, else the request, when whole numbers, times the count.
 */
public record QuotaNames(String countName, String memoryName, String coreName, int memoryFactor,
        long defaultMemoryPerDevice) {

    public QuotaNames {
        requireNonNull(countName, "countName");
        requireNonNull(memoryName, "memoryName");
        requireNonNull(coreName, "coreName");
        memoryFactor = Math.max(1, memoryFactor);
    }

    Vendor.QuotaResources resources() {
        if (countName.isEmpty() || (memoryName.isEmpty() && coreName.isEmpty())) {
            return Vendor.QuotaResources.NONE;
        }
        return new Vendor.QuotaResources(memoryName.isEmpty() ? null : memoryName,
                coreName.isEmpty() ? null : coreName, memoryFactor);
    }

    Vendor.DeviceRequest request(ContainerNode container) {
        long count = whole(container, countName);
        if (count <= 0) {
            return Vendor.DeviceRequest.NONE;
        }
        long memory = container.declares(memoryName) ? whole(container, memoryName) : defaultMemoryPerDevice;
        return new Vendor.DeviceRequest(count, memory, whole(container, coreName));
    }

    private static long whole(ContainerNode container, String resource) {
        return container.limitOrRequest(resource).flatMap(Quantity::exactLong).orElse(0L);
    }
}
