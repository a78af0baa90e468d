package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * One row of the table of vendors whose devices HAMi's scheduler derives from node capacity instead of a register
 * annotation, with the chart's default resource names, exactly as each vendor's {@code GetNodeDevices} builds them:
 * device {@code i} has id {@code <node>-<idWord>-<i>}, type and {@code devicevendor} {@link #type} (the vendor's
 * common word, on which the scheduler keys requests), index {@code i}, numa 0 (Kunlun XPU: 1 for the upper half),
 * health true, and {@link #count}, devmem and {@link #devcore} as the row says.
 *
 * @param vendor          the backend, for people
 * @param idWord          the word in the device ids ({@code cambricon-mlu}, {@code metax}, {@code AWSNeuron})
 * @param type            the devices' type and devicevendor: HAMi's common word ({@code MLU}, {@code Metax-GPU})
 * @param rule            how the devices are counted and sized
 * @param countResource   the capacity that counts (cores for Cambricon and Mthreads, devices for the others)
 * @param memoryResource  the memory capacity ({@link Rule#PER_CORE_UNITS}), empty otherwise
 * @param coreResource    the core capacity of {@link Rule#AWS_NEURON}, empty otherwise
 * @param unitsPerDevice  count units per device (100 Cambricon, 16 Mthreads, 1 the others)
 * @param memoryFactorMiB MiB per memory unit (256 Cambricon, 512 Mthreads; 0 when devmem is fixed)
 * @param count           each device's count (how many tasks may share it); unused by {@link Rule#AWS_NEURON}
 * @param devmem          each device's devmem in MiB when fixed ({@link Rule#PER_DEVICE}, {@link Rule#KUNLUN})
 * @param devcore         each device's devcore; unused by {@link Rule#AWS_NEURON}
 * @param zeroIsError     whether a zero count is the scheduler's error {@code device not found <countResource>}
 *                        (Mthreads, Kunlun XPU, AWS Neuron) rather than no device
 * @param releases        the HAMi releases that derive devices this way
 */
public record CapacityVendor(String vendor, String idWord, String type, Rule rule, String countResource,
                             String memoryResource, String coreResource, int unitsPerDevice, int memoryFactorMiB,
                             int count, int devmem, int devcore, boolean zeroIsError,
                             Set<HamiRelease> releases) {

    /** How a vendor's devices are derived from its capacity. */
    public enum Rule {
        /**
         * Cambricon, Mthreads: device {@code i} exists while {@code i × unitsPerDevice < cores} (a partial last
         * device counts); devmem = memory × memoryFactorMiB × unitsPerDevice ÷ cores.
         */
        PER_CORE_UNITS,
        /** One device per count unit, every field fixed by the row. */
        PER_DEVICE,
        /** One device per count unit, the devices from index {@code count ÷ 2} on numa 1. */
        KUNLUN,
        /**
         * One device per count unit with count = cores per device (core capacity ÷ device capacity, integer
         * division), devcore the mask of that many cores ({@code 2^cores − 1}: 2 cores → 3), devmem 0 and custominfo
         * {@code {"AWSNodeType": <node label node.kubernetes.io/instance-type, "" when absent>}}.
         */
        AWS_NEURON
    }

    /** The node label AWS Neuron devices carry in custominfo as {@code AWSNodeType}. */
    public static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";

    private static final Set<HamiRelease> BOTH = Set.of(HamiRelease.V2_9, HamiRelease.V2_10);

    public static final List<CapacityVendor> TABLE = List.of(
            new CapacityVendor("Cambricon", "cambricon-mlu", "MLU", Rule.PER_CORE_UNITS,
                    "cambricon.com/mlu.smlu.vcore", "cambricon.com/mlu.smlu.vmemory", "", 100, 256, 100, 0, 100,
                    false, BOTH),
            new CapacityVendor("Mthreads", "mthreads", "Mthreads", Rule.PER_CORE_UNITS, "mthreads.com/sgpu-core",
                    "mthreads.com/sgpu-memory", "", 16, 512, 100, 0, 16, true, BOTH),
            new CapacityVendor("Metax GPU", "metax", "Metax-GPU", Rule.PER_DEVICE, "metax-tech.com/gpu", "", "", 1, 0,
                    1, 65536, 100, false, BOTH),
            new CapacityVendor("Kunlun XPU", "kunlun", "kunlun", Rule.KUNLUN, "kunlunxin.com/xpu", "", "", 1, 0, 100,
                    98304, 100, true, BOTH),
            new CapacityVendor("Enflame GCU", "GCU", "GCU", Rule.PER_DEVICE, "enflame.com/gcu", "", "", 1, 0, 1, 100,
                    100, false, BOTH),
            new CapacityVendor("Enflame shared", "enflame", "Enflame", Rule.PER_DEVICE, "enflame.com/gcu-count", "",
                    "", 1, 0, 100, 100, 100, false, Set.of(HamiRelease.V2_9)),
            new CapacityVendor("AWS Neuron", "AWSNeuron", "AWSNeuron", Rule.AWS_NEURON, "aws.amazon.com/neuron", "",
                    "aws.amazon.com/neuroncore", 1, 0, 0, 0, 0, true, BOTH),
            new CapacityVendor("AMD", "AMDGPU", "AMDGPU", Rule.PER_DEVICE, "amd.com/gpu", "", "", 1, 0, 1, 192000, 100,
                    false, Set.of(HamiRelease.V2_9)));

    public CapacityVendor {
        requireNonNull(vendor, "vendor");
        requireNonNull(idWord, "idWord");
        requireNonNull(type, "type");
        requireNonNull(rule, "rule");
        requireNonNull(countResource, "countResource");
        requireNonNull(memoryResource, "memoryResource");
        requireNonNull(coreResource, "coreResource");
        releases = Set.copyOf(releases);
    }

    /** The capacities besides the count that the devices are derived from (memory, cores), possibly none. */
    public List<String> otherResources() {
        return Stream.of(memoryResource, coreResource).filter(r -> !r.isEmpty()).toList();
    }

    /** Whether {@code resource} is one this row derives devices from. */
    public boolean reads(String resource) {
        return countResource.equals(resource) || otherResources().contains(resource);
    }
}
