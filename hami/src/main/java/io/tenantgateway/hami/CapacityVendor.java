package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Set;

/**
 * One row of the table of vendors whose devices HAMi's scheduler derives from node capacity instead of a register
 * annotation (hami-vendors.md §5 "Capacity-derived devices"), with the chart's default resource names (§2).
 *
 * @param vendor          the backend, for people; also the derived devices' {@code type}
 * @param countResource   the capacity that counts (cores for Cambricon and Mthreads, devices for the others)
 * @param memoryResource  the memory capacity, empty when devmem is not derived
 * @param unitsPerDevice  count units per device (100 Cambricon, 16 Mthreads, 1 the others)
 * @param memoryFactorMiB MiB per memory unit (256 Cambricon, 512 Mthreads, 0 when not derived)
 * @param releases        the HAMi releases that derive devices this way
 */
public record CapacityVendor(String vendor, String countResource, String memoryResource, int unitsPerDevice,
                             int memoryFactorMiB, Set<HamiRelease> releases) {

    private static final Set<HamiRelease> BOTH = Set.of(HamiRelease.V2_9, HamiRelease.V2_10);

    public static final List<CapacityVendor> TABLE = List.of(
            new CapacityVendor("Cambricon", "cambricon.com/mlu.smlu.vcore", "cambricon.com/mlu.smlu.vmemory", 100,
                    256, BOTH),
            new CapacityVendor("Mthreads", "mthreads.com/sgpu-core", "mthreads.com/sgpu-memory", 16, 512, BOTH),
            new CapacityVendor("Metax GPU", "metax-tech.com/gpu", "", 1, 0, BOTH),
            new CapacityVendor("Kunlun XPU", "kunlunxin.com/xpu", "", 1, 0, BOTH),
            new CapacityVendor("Enflame GCU", "enflame.com/gcu", "", 1, 0, BOTH),
            new CapacityVendor("AWS Neuron", "aws.amazon.com/neuron", "", 1, 0, BOTH),
            new CapacityVendor("AMD", "amd.com/gpu", "", 1, 0, Set.of(HamiRelease.V2_9)));

    public CapacityVendor {
        requireNonNull(vendor, "vendor");
        requireNonNull(countResource, "countResource");
        requireNonNull(memoryResource, "memoryResource");
        releases = Set.copyOf(releases);
    }
}
