package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.HamiCore;

/**
 * How HAMi-core is set up on this node, for the Allocate answer.
 *
 * @param hookPath HAMi's {@code HOOK_PATH} (default {@code /usr/local}): the host directory whose {@code vgpu/}
 *     holds {@code libvgpu.so} and {@code ld.so.preload} (copied there by HAMi's {@code vgpu-init.sh}); the same
 *     path inside the container
 * @param deviceMemoryScaling HAMi's {@code deviceMemoryScaling}; above 1 sets {@code CUDA_OVERSUBSCRIBE=true}
 * @param logLevel {@code LIBCUDA_LOG_LEVEL}, or {@code ""} for none
 * @param disableCoreLimit sets {@code GPU_CORE_UTILIZATION_POLICY=disable}
 */
public record HamiCoreSettings(String hookPath, double deviceMemoryScaling, String logLevel,
        boolean disableCoreLimit) {
    public static final HamiCoreSettings DEFAULTS = new HamiCoreSettings(HamiCore.DEFAULT_HOOK_PATH, 1.0, "", false);

    public HamiCoreSettings {
        requireNonNull(hookPath, "hookPath");
        requireNonNull(logLevel, "logLevel");
        if (!hookPath.startsWith("/") || (hookPath.length() > 1 && hookPath.endsWith("/"))) {
            throw new IllegalArgumentException("hookPath: " + hookPath + " (expected: an absolute path without a"
                    + " trailing /, e.g. " + HamiCore.DEFAULT_HOOK_PATH + ")");
        }
        if (!(deviceMemoryScaling > 0) || Double.isInfinite(deviceMemoryScaling)) {
            throw new IllegalArgumentException("deviceMemoryScaling: " + deviceMemoryScaling + " (expected: > 0)");
        }
    }

    public HamiCoreSettings withDeviceMemoryScaling(double scaling) {
        return new HamiCoreSettings(hookPath, scaling, logLevel, disableCoreLimit);
    }

    /** {@code <hookPath>/<relative>}. */
    public String path(String relative) {
        return (hookPath.equals("/") ? "" : hookPath) + "/" + relative;
    }
}
