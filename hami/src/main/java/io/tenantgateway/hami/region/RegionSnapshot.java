package io.tenantgateway.hami.region;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Set;

/**
 * What one read of a container's shared region found. Immutable.
 *
 * @param version the layout the region was read as
 * @param devices one entry per device index below {@code device_num} (at most 16)
 * @param procNum {@code proc_num} clamped to 0..1024: the slots read
 * @param liveProcesses how many of those slots had a non-zero status, so counted in the sums
 * @param lastKernelTime {@code last_kernel_time}, unix seconds; 0 when none was recorded (always 0 for v0)
 * @param priority the container's task priority as HAMi-core recorded it
 * @param utilizationSwitch {@code utilization_switch} (set by HAMi's priority feedback)
 * @param recentKernel {@code recent_kernel} (HAMi's priority feedback writes -1 to block)
 * @param warnings what was bounded instead of trusted; empty for a region HAMi-core wrote
 */
public record RegionSnapshot(RegionVersion version, List<DeviceUsage> devices, int procNum, int liveProcesses,
        long lastKernelTime, int priority, int utilizationSwitch, int recentKernel, Set<RegionWarning> warnings) {

    public RegionSnapshot {
        requireNonNull(version, "version");
        devices = List.copyOf(devices);
        warnings = Set.copyOf(warnings);
        if (procNum < 0 || procNum > RegionLayout.MAX_PROCESSES) {
            throw new IllegalArgumentException("procNum: " + procNum + " (expected: 0.." + RegionLayout.MAX_PROCESSES
                    + ")");
        }
        if (liveProcesses < 0 || liveProcesses > procNum) {
            throw new IllegalArgumentException("liveProcesses: " + liveProcesses + " (expected: 0.." + procNum + ")");
        }
        if (lastKernelTime < 0) {
            throw new IllegalArgumentException("lastKernelTime: " + lastKernelTime + " (expected: >= 0)");
        }
    }

    /** The number of devices: {@code device_num}, at most 16. */
    public int deviceCount() {
        return devices.size();
    }

    /** Whether a kernel launch was recorded ({@code hami_container_last_kernel_elapsed_seconds} is exported then). */
    public boolean hasLastKernel() {
        return lastKernelTime > 0;
    }
}
