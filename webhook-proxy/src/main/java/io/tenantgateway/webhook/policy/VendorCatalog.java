package io.tenantgateway.webhook.policy;

import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.HamiVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The vendor backends HAMi registers, built from a {@link DeviceConfig} under a {@link PolicyConfig}, with the
 * scheduler-side state two of them read ({@link ClusterDeviceState}).
 *
 * <p>HAMi iterates a Go map, so its order is random per request; this webhook uses one fixed order, HAMi's
 * registration order: NVIDIA, Cambricon ({@code MLU}), Hygon ({@code DCU}), Enflame whole-card ({@code GCU}),
 * Enflame shared ({@code Enflame}), Mthreads, Metax GPU, Metax sGPU, Kunlun XPU ({@code kunlun}), Kunlun vXPU
 * ({@code XPU}), AWS Neuron, AMD, Vastai, Biren (v2.10), then one Ascend backend per {@code vnpus} chip (only with
 * {@code --enable-ascend}) and one Iluvatar backend per {@code iluvatars} chip (only with {@code --enable-iluvatar}),
 * each in file order. The per-chip backends come as one {@link ChipVendors} per vendor, which looks a container's
 * chips up by resource name: the list has at most 16 entries however many chips are configured. The order shows only in the relative position of env entries two backends append to one
 * container, and in which runtimeClassName wins when two backends with different classes match one container.
 */
final class VendorCatalog {

    /**
     * A backend that only detects: its row of the vendor table (common word, block, releases, allocated-devices
     * annotation), the names found in limits, and whether it has a release's detect-only form; for the two that take
     * part in the quota check, their memory factor (the block's {@code memoryFactor} when set). Both count 100 cores
     * per device when a container names none.
     */
    private record Detector(HamiVendor row, List<String> keys, Set<HamiRelease> releases, int quotaMemoryFactor) {
        Detector(HamiVendor row, List<String> keys, Set<HamiRelease> releases) {
            this(row, keys, releases, 0);
        }

        Detector(HamiVendor row, List<String> keys) {
            this(row, keys, Set.of(HamiRelease.values()));
        }

        boolean in(HamiRelease compat) {
            return releases.contains(compat) && row.in(compat);
        }

        Vendor build(DeviceConfig devices, HamiRelease compat) {
            VendorBlock values = devices.block(row.block());
            QuotaNames quota = null;
            if (quotaMemoryFactor > 0) {
                int factor = quotaMemoryFactor;
                String configured = values.name("memoryFactor");
                if (!configured.isEmpty()) {
                    factor = Integer.parseInt(configured);
                }
                quota = QuotaNames.of(values.name("resourceCountName"), values.name("resourceMemoryName"),
                        values.name("resourceCoreName"), factor, row.allocatedKey()).withDefaultCores(100);
            }
            return new DetectOnlyVendor(row.commonWord(compat), keys.stream().map(values::name).toList(), quota);
        }
    }

    private static final List<String> COUNT = List.of("resourceCountName");

    private static final Detector CAMBRICON = new Detector(HamiVendor.CAMBRICON, COUNT, Set.of(HamiRelease.values()),
            256);
    private static final Detector HYGON = new Detector(HamiVendor.HYGON, COUNT, Set.of(HamiRelease.values()), 1);
    private static final Detector ENFLAME_GCU = new Detector(HamiVendor.ENFLAME_GCU, List.of("resourceNameGCU"));
    private static final Detector METAX_GPU = new Detector(HamiVendor.METAX_GPU, COUNT);
    private static final Detector KUNLUN_XPU = new Detector(HamiVendor.KUNLUN_XPU, COUNT);
    /** v2.9's AWS Neuron and AMD only detect; v2.10's are {@link AwsNeuronVendor} and {@link AmdVendor}. */
    private static final Detector AWS_NEURON_V29 = new Detector(HamiVendor.AWS_NEURON,
            List.of("resourceCountName", "resourceCoreName"), Set.of(HamiRelease.V2_9));
    private static final Detector AMD_V29 = new Detector(HamiVendor.AMD,
            List.of("resourceCountName", "resourceMemoryName"), Set.of(HamiRelease.V2_9));
    private static final Detector VASTAI = new Detector(HamiVendor.VASTAI, COUNT);
    private static final Detector BIREN = new Detector(HamiVendor.BIREN, COUNT);

    private VendorCatalog() {
    }

    static List<Vendor> vendors(DeviceConfig devices, PolicyConfig policy, ClusterDeviceState state) {
        HamiRelease compat = policy.compat();
        List<Vendor> vendors = new ArrayList<>();
        vendors.add(new NvidiaVendor(devices.nvidia()));
        detect(vendors, devices, compat, CAMBRICON, HYGON, ENFLAME_GCU);
        vendors.add(new EnflameSharedVendor(devices.block("enflame"), compat, state.enflameSharedFactor()));
        vendors.add(new MthreadsVendor(devices.block("mthreads"), compat));
        detect(vendors, devices, compat, METAX_GPU);
        vendors.add(new MetaxSgpuVendor(devices.block("metax")));
        detect(vendors, devices, compat, KUNLUN_XPU);
        vendors.add(new KunlunVxpuVendor(devices.block("kunlun"), compat));
        if (compat == HamiRelease.V2_10) {
            vendors.add(new AwsNeuronVendor(devices.block("awsneuron"), state.neuronCoresPerDevice()));
            vendors.add(new AmdVendor(devices.block("amd")));
        }
        detect(vendors, devices, compat, AWS_NEURON_V29, AMD_V29, VASTAI, BIREN);
        if (policy.enableAscend()) {
            vendors.add(new ChipVendors("Ascend", devices.vnpus().stream().map(chip -> new AscendVendor(chip, compat))
                    .toList()));
        }
        if (policy.enableIluvatar()) {
            vendors.add(new ChipVendors("Iluvatar", devices.iluvatars().stream().map(IluvatarVendor::new).toList()));
        }
        return List.copyOf(vendors);
    }

    private static void detect(List<Vendor> vendors, DeviceConfig devices, HamiRelease compat, Detector... detectors) {
        for (Detector detector : detectors) {
            if (detector.in(compat)) {
                vendors.add(detector.build(devices, compat));
            }
        }
    }
}
