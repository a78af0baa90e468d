package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.GpuDevice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --report-node-capacity}: the totals of this node's healthy GPUs as the extended resources HAMi's device config
 * names, written to the Node's {@code status.capacity} and {@code status.allocatable} as HAMi's device plugin does with
 * its flag of that name (HAMi master), so that ResourceQuota, Kueue and other schedulers see GPU memory and cores.
 *
 * @param memoryResource HAMi's {@code nvidia.resourceMemoryName} (default {@code nvidia.com/gpumem}): Σ devmem in MiB;
 *                       {@code ""} when the device config names none (then it is not reported)
 * @param coreResource   HAMi's {@code nvidia.resourceCoreName} (default {@code nvidia.com/gpucores}): Σ devcore,
 *                       percent (100 per GPU unless the device says otherwise); {@code ""}: not reported
 */
public record NodeCapacityReport(String memoryResource, String coreResource) {
    public NodeCapacityReport {
        memoryResource = requireNonNull(memoryResource, "memoryResource").trim();
        coreResource = requireNonNull(coreResource, "coreResource").trim();
        if (memoryResource.isEmpty() && coreResource.isEmpty()) {
            throw new ConfigException("--report-node-capacity", "true with neither nvidia.resourceMemoryName nor"
                    + " nvidia.resourceCoreName in --device-config", "at least one resource name to report");
        }
        if (memoryResource.equals(coreResource)) {
            throw new ConfigException("--device-config", "nvidia.resourceMemoryName and nvidia.resourceCoreName both "
                    + memoryResource, "two different names: --report-node-capacity reports both");
        }
    }

    /** The resources reported, memory first; a resource the device config does not name is left out. */
    public List<String> resources() {
        return totals(List.of()).keySet().stream().toList();
    }

    /**
     * The quantities to report for {@code devices}: Σ {@code devmem} (MiB) and Σ {@code devcore} of the healthy
     * ones, as decimal strings; {@code "0"} when none is healthy (the resource stays, lowered, not removed).
     */
    public Map<String, String> totals(List<GpuDevice> devices) {
        HealthyTotals healthy = HealthyTotals.ofGpus(devices);
        Map<String, String> totals = new LinkedHashMap<>();
        if (!memoryResource.isEmpty()) {
            totals.put(memoryResource, Long.toString(healthy.memoryMiB()));
        }
        if (!coreResource.isEmpty()) {
            totals.put(coreResource, Long.toString(healthy.cores()));
        }
        return totals;
    }
}
