package io.tenantgateway.hami;

/**
 * HAMi's default NVIDIA extended-resource names (the {@code nvidia:} block of its
 * {@code device-config.yaml}: {@code resourceCountName}, {@code resourceMemoryName}, …). A cluster may
 * rename them in that ConfigMap; the webhook reads the configured names and falls back to these, while
 * device registration, the quota lookup and the lab use the defaults.
 */
public final class ResourceNames {
    /** {@code resourceCountName}: how many (shared) GPUs a container gets; also the node capacity. */
    public static final String NVIDIA_GPU = "nvidia.com/gpu";
    /** {@code resourceMemoryName}: device memory per GPU, in MiB. */
    public static final String NVIDIA_GPU_MEMORY = "nvidia.com/gpumem";
    /** {@code resourceMemoryPercentageName}: device memory per GPU, in percent (0..100). */
    public static final String NVIDIA_GPU_MEMORY_PERCENTAGE = "nvidia.com/gpumem-percentage";
    /** {@code resourceCoreName}: compute per GPU, in percent (100 = the whole GPU). */
    public static final String NVIDIA_GPU_CORES = "nvidia.com/gpucores";
    /** {@code resourcePriorityName}: the task priority handed to HAMi-core as {@code CUDA_TASK_PRIORITY}. */
    public static final String NVIDIA_PRIORITY = "nvidia.com/priority";

    /** ResourceQuota keys are {@code limits.<resource>} (HAMi checks {@code limits.nvidia.com/gpumem|gpucores}). */
    public static final String QUOTA_LIMITS_PREFIX = "limits.";

    private ResourceNames() {
    }
}
