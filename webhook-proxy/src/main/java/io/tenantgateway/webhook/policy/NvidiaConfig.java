package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.ResourceNames;
import java.util.Set;

/**
 * The {@code nvidia:} block of HAMi's {@code device-config.yaml} (ConfigMap {@code hami-scheduler-device}). Field
 * names follow the YAML keys; {@link #defaults()} are HAMi's documented defaults. A value out of range is a
 * {@link ConfigException} naming its key ({@code nvidia.defaultCores}).
 *
 * <p>{@code defaultMemory}, {@code defaultCores}, {@code deviceSplitCount} and the scaling factors are read and
 * validated but the webhook does not use them: HAMi applies them in the scheduler (request generation and device
 * registration), never in admission.
 */
public record NvidiaConfig(
        String resourceCountName,
        String resourceMemoryName,
        String resourceMemoryPercentageName,
        String resourceCoreName,
        String resourcePriorityName,
        boolean overwriteEnv,
        long defaultMemory,
        long defaultCores,
        long defaultGpuNum,
        int memoryFactor,
        String gpuCorePolicy,
        String runtimeClassName,
        long deviceSplitCount,
        double deviceMemoryScaling,
        double deviceCoreScaling) {

    /** HAMi's {@code GPUCoreUtilizationPolicy} values. */
    public static final Set<String> CORE_POLICIES = Set.of("default", "force", "disable");
    /**
     * The largest {@code deviceMemoryScaling} and {@code deviceCoreScaling}: HAMi documents values over 1 as
     * overcommit, and its device plugin multiplies a GPU's memory by the factor into an {@code int32} MiB count,
     * which 100 keeps far inside for any GPU made.
     */
    public static final long MAX_SCALING = 100;
    static final String SCALING_RANGE = "> 0 and <= " + MAX_SCALING;

    public NvidiaConfig {
        resourceCountName = required("nvidia.resourceCountName", resourceCountName);
        resourceMemoryName = requireNonNull(resourceMemoryName, "resourceMemoryName").trim();
        resourceMemoryPercentageName = requireNonNull(resourceMemoryPercentageName, "resourceMemoryPercentageName")
                .trim();
        resourceCoreName = requireNonNull(resourceCoreName, "resourceCoreName").trim();
        resourcePriorityName = requireNonNull(resourcePriorityName, "resourcePriorityName").trim();
        gpuCorePolicy = requireNonNull(gpuCorePolicy, "gpuCorePolicy").trim();
        runtimeClassName = requireNonNull(runtimeClassName, "runtimeClassName").trim();
        if (gpuCorePolicy.isEmpty()) {
            gpuCorePolicy = "default";
        }
        if (!CORE_POLICIES.contains(gpuCorePolicy)) {
            throw new ConfigException("nvidia.gpuCorePolicy", "'" + gpuCorePolicy + "'", "default, force or disable");
        }
        atLeast("nvidia.defaultMemory", defaultMemory, 0);
        atLeast("nvidia.defaultCores", defaultCores, 0);
        if (defaultCores > 100) {
            throw new ConfigException("nvidia.defaultCores", defaultCores, "0..100");
        }
        atLeast("nvidia.defaultGPUNum", defaultGpuNum, 0);
        atLeast("nvidia.memoryFactor", memoryFactor, 1);
        atLeast("nvidia.deviceSplitCount", deviceSplitCount, 1);
        if (!(deviceMemoryScaling > 0 && deviceMemoryScaling <= MAX_SCALING)) {
            throw new ConfigException("nvidia.deviceMemoryScaling", deviceMemoryScaling, SCALING_RANGE);
        }
        if (!(deviceCoreScaling > 0 && deviceCoreScaling <= MAX_SCALING)) {
            throw new ConfigException("nvidia.deviceCoreScaling", deviceCoreScaling, SCALING_RANGE);
        }
    }

    /** HAMi's defaults (its chart's ConfigMap and {@code InitDefaultDevices}). */
    public static NvidiaConfig defaults() {
        return new NvidiaConfig(ResourceNames.NVIDIA_GPU, ResourceNames.NVIDIA_GPU_MEMORY,
                ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE, ResourceNames.NVIDIA_GPU_CORES, ResourceNames.NVIDIA_PRIORITY,
                false, 0, 0, 1, 1, "default", "", 10, 1.0, 1.0);
    }

    private static String required(String key, String value) {
        if (value == null || value.isBlank()) {
            throw new ConfigException(key, "'" + (value == null ? "" : value) + "'",
                    "a resource name such as nvidia.com/gpu");
        }
        return value.trim();
    }

    private static void atLeast(String key, long value, long minimum) {
        if (value < minimum) {
            throw new ConfigException(key, value, ">= " + minimum);
        }
    }
}
