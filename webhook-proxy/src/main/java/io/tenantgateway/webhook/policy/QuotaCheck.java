package io.tenantgateway.webhook.policy;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.webhook.quota.QuotaLookup;
import io.tenantgateway.webhook.quota.QuotaLookup.Quota;
import java.util.List;
import java.util.Optional;

/**
 * HAMi's admission-time quota check ({@code fitResourceQuota} + {@code QuotaManager.FitQuota}):
 *
 * <ul>
 *   <li>v2.10: per container, memory and cores per device times the device count; app containers add up, init
 *       containers count as the largest single one (they run one after another), the pod needs the larger of
 *       the two;</li>
 *   <li>v2.9: only app containers asking for exactly one device, their memory and cores added up;</li>
 *   <li>both: memory in MiB (each vendor applies its memory factor, {@link Vendor#request}) against the quota limit
 *       times the factor; cores against the core limit; {@code used + request > limit} exceeds;</li>
 *   <li>a limit of 0: v2.10 blocks every request (HAMi PR #2313, "an explicit zero quota must block"); v2.9 reads
 *       it as no limit.</li>
 * </ul>
 * A pod that asks for no device memory and no cores is never checked.
 */
final class QuotaCheck {

    sealed interface Result permits Result.Fits, Result.Exceeded, Result.Failed {
        Result FITS = new Fits();
        Result EXCEEDED = new Exceeded();

        record Fits() implements Result {
        }

        record Exceeded() implements Result {
        }

        record Failed(String message) implements Result {
        }
    }

    private QuotaCheck() {
    }

    static Result check(PodNode pod, String namespace, List<Vendor> vendors, HamiRelease compat, QuotaLookup lookup) {
        if (lookup == QuotaLookup.NONE) {
            return Result.FITS; // no quota anywhere (the standalone webhook without API access): nothing to count
        }
        for (Vendor group : vendors) {
            if (compat == HamiRelease.V2_9 && !(group instanceof NvidiaVendor)) {
                continue; // v2.9 checks NVIDIA's resources only
            }
            for (Vendor vendor : group.quotaVendors(pod)) {
                Result result = check(pod, namespace, vendor, compat, lookup);
                if (result != Result.FITS) {
                    return result;
                }
            }
        }
        return Result.FITS;
    }

    /** One backend's part of the check. */
    private static Result check(PodNode pod, String namespace, Vendor vendor, HamiRelease compat,
            QuotaLookup lookup) {
        Vendor.QuotaResources resources = vendor.quotaResources();
        if (resources.memoryResource() == null && resources.coreResource() == null) {
            return Result.FITS;
        }
        long[] request = compat == HamiRelease.V2_9 ? requestV29(pod, vendor) : requestV210(pod, vendor);
        long memory = request[0];
        long cores = request[1];
        if (memory == 0 && cores == 0) {
            return Result.FITS;
        }
        int factor = resources.memoryFactor();
        boolean zeroBlocks = compat == HamiRelease.V2_10;
        try {
            if (exceeds(lookup, namespace, resources.memoryResource(), resources, true, memory, factor, zeroBlocks)
                    || exceeds(lookup, namespace, resources.coreResource(), resources, false, cores, 1, zeroBlocks)) {
                return Result.EXCEEDED;
            }
        } catch (RuntimeException e) {
            return new Result.Failed("quota lookup failed for namespace " + namespace + ": " + e.getMessage());
        }
        return Result.FITS;
    }

    private static boolean exceeds(QuotaLookup lookup, String namespace, String resource,
            Vendor.QuotaResources resources, boolean memory, long request, int factor, boolean zeroBlocks) {
        if (resource == null) {
            return false;
        }
        Optional<Quota> quota = lookup.find(namespace, new QuotaLookup.Resource(resource,
                resources.allocatedAnnotation(), memory ? QuotaLookup.Measure.MEMORY_MIB : QuotaLookup.Measure.CORES));
        if (quota.isEmpty()) {
            return false;
        }
        long limit = factor > 1 ? saturatedMultiply(quota.get().limit(), factor) : quota.get().limit();
        return (limit != 0 || zeroBlocks) && saturatedAdd(quota.get().used(), request) > limit;
    }

    private static long[] requestV210(PodNode pod, Vendor vendor) {
        long appMemory = 0;
        long appCores = 0;
        for (ContainerNode container : pod.containers()) {
            Vendor.DeviceRequest request = vendor.request(container);
            appMemory = saturatedAdd(appMemory, saturatedMultiply(request.memoryPerDevice(), request.count()));
            appCores = saturatedAdd(appCores, saturatedMultiply(request.coresPerDevice(), request.count()));
        }
        long initMemory = 0;
        long initCores = 0;
        for (ContainerNode container : pod.initContainers()) {
            Vendor.DeviceRequest request = vendor.request(container);
            initMemory = Math.max(initMemory, saturatedMultiply(request.memoryPerDevice(), request.count()));
            initCores = Math.max(initCores, saturatedMultiply(request.coresPerDevice(), request.count()));
        }
        return new long[] {Math.max(appMemory, initMemory), Math.max(appCores, initCores)};
    }

    private static long[] requestV29(PodNode pod, Vendor vendor) {
        long memory = 0;
        long cores = 0;
        for (ContainerNode container : pod.containers()) {
            Vendor.DeviceRequest request = vendor.request(container);
            if (request.count() == 1) {
                memory = saturatedAdd(memory, request.memoryPerDevice());
                cores = saturatedAdd(cores, request.coresPerDevice());
            }
        }
        return new long[] {memory, cores};
    }

    // Requests are user input: a huge gpumem must read as "exceeds", never wrap around to a small number.
    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? (a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : sum;
    }

    private static long saturatedMultiply(long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
    }
}
