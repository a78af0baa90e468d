package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.VirtualDeviceIds;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * One device as the plugin lists it to kubelet: a replica {@code <UUID>-<i>} of a GPU.
 *
 * @param numaNode the GPU's NUMA node, when the plugin reports topology
 */
public record VirtualDevice(String id, String gpuUuid, boolean healthy, OptionalInt numaNode) {
    public VirtualDevice {
        requireNonNull(id, "id");
        requireNonNull(gpuUuid, "gpuUuid");
        requireNonNull(numaNode, "numaNode");
    }

    /**
     * HAMi's list: {@code count} (the split count) replicas per GPU, {@code <UUID>-0} … {@code <UUID>-<count−1>},
     * each with the GPU's health, GPUs in the order given.
     *
     * @param topology whether to report each GPU's NUMA node (HAMi's {@code enableNumaTopology})
     */
    public static List<VirtualDevice> of(List<GpuDevice> gpus, boolean topology) {
        requireNonNull(gpus, "gpus");
        List<VirtualDevice> devices = new ArrayList<>();
        for (GpuDevice gpu : gpus) {
            for (int i = 0; i < gpu.count(); i++) {
                devices.add(new VirtualDevice(VirtualDeviceIds.of(gpu.id(), i), gpu.id(), gpu.healthy(),
                        topology ? OptionalInt.of(gpu.numa()) : OptionalInt.empty()));
            }
        }
        return List.copyOf(devices);
    }

    /** The same device, unhealthy. */
    public VirtualDevice unhealthy() {
        return new VirtualDevice(id, gpuUuid, false, numaNode);
    }
}
