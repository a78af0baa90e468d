package io.tenantgateway.agent.devices;

import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.List;

/**
 * The sums over a node's healthy devices that its capacity is advertised from, for every vendor alike.
 *
 * @param count     Σ {@code count}: the slices kubelet lists
 * @param memoryMiB Σ {@code devmem}, MiB
 * @param cores     Σ {@code devcore}
 * @param devices   how many devices are healthy
 */
record HealthyTotals(long count, long memoryMiB, long cores, long devices) {

    static HealthyTotals of(List<RegisteredDevice> all) {
        long count = 0;
        long memory = 0;
        long cores = 0;
        long devices = 0;
        for (RegisteredDevice d : all) {
            if (d.health()) {
                count += d.count();
                memory += d.devmem();
                cores += d.devcore();
                devices++;
            }
        }
        return new HealthyTotals(count, memory, cores, devices);
    }

    /** {@link #of} for NVIDIA's GPUs. */
    static HealthyTotals ofGpus(List<GpuDevice> gpus) {
        return of(gpus.stream().map(RegisteredDevice::of).toList());
    }
}
