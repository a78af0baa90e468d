package io.tenantgateway.hami;

/**
 * HAMi-core's side of an allocation: the environment variables the device plugin's Allocate answer sets (HAMi-core,
 * {@code libvgpu.so}, reads them inside the container) and the host paths it mounts. Wire facts of HAMi v2.10's
 * NVIDIA device plugin (shared/spec/device-plugin.md §2).
 */
public final class HamiCore {
    /** The GPUs the NVIDIA container runtime exposes: the entry's distinct UUIDs joined by {@code ,}. */
    public static final String ENV_VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
    /** {@code CUDA_DEVICE_MEMORY_LIMIT_<i>} = {@code "<MiB>m"}, one per device of the entry, in entry order. */
    public static final String ENV_MEMORY_LIMIT_PREFIX = "CUDA_DEVICE_MEMORY_LIMIT_";
    /** Cores (percent) of the entry's first device. */
    public static final String ENV_SM_LIMIT = "CUDA_DEVICE_SM_LIMIT";
    /** {@code <hookPath>/vgpu/<random uuid>.cache}: HAMi-core's shared usage file for this container. */
    public static final String ENV_MEMORY_SHARED_CACHE = "CUDA_DEVICE_MEMORY_SHARED_CACHE";
    /** {@code "true"} when deviceMemoryScaling &gt; 1 (memory is oversubscribed). */
    public static final String ENV_OVERSUBSCRIBE = "CUDA_OVERSUBSCRIBE";
    /** HAMi-core's log level, when configured. */
    public static final String ENV_LOG_LEVEL = "LIBCUDA_LOG_LEVEL";
    /** {@code "disable"} when the core limit is switched off; the webhook sets other policies. */
    public static final String ENV_CORE_UTILIZATION_POLICY = "GPU_CORE_UTILIZATION_POLICY";
    /** A container env {@code CUDA_DISABLE_CONTROL=true} leaves {@code /etc/ld.so.preload} unmounted. */
    public static final String ENV_DISABLE_CONTROL = "CUDA_DISABLE_CONTROL";

    /** HAMi's default {@code HOOK_PATH} (chart {@code global.gpuHookPath}). */
    public static final String DEFAULT_HOOK_PATH = "/usr/local";
    /** The library, relative to the hook path; a versioned {@code libvgpu.so.<v>} on the host is preferred. */
    public static final String LIBRARY = "vgpu/libvgpu.so";
    /** The preload file, relative to the hook path. */
    public static final String PRELOAD = "vgpu/ld.so.preload";
    /** Per-container cache directories on the host, relative to the hook path: {@code <podUID>_<container>}. */
    public static final String CONTAINERS = "vgpu/containers";
    /** The lock directory HAMi-core shares between containers ({@code /tmp/vgpulock/lock}), same path on both sides. */
    public static final String LOCK_DIR = "/tmp/vgpulock";
    /** Where the preload file goes in the container. */
    public static final String CONTAINER_PRELOAD = "/etc/ld.so.preload";

    private HamiCore() {
    }
}
