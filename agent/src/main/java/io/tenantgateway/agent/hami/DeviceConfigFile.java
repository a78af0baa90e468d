package io.tenantgateway.agent.hami;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.policy.NvidiaConfig;
import java.nio.file.Path;
import java.util.Optional;

/**
 * HAMi's {@code device-config.yaml} as {@code --device-config} names it (HAMi's defaults without it), read once, on
 * first use, for every part that reads it: device registration (split count, scaling) and the device plugin
 * (resource name, memory scaling).
 *
 * <p>The flag mixins take this rather than a {@link DeviceConfig}: picocli reflects on a mixin's methods, which loads
 * the classes in their signatures, and a tunnel-only agent must not load the webhook's classes
 * (TunnelOnlyClassLoadingIT). Thread-safe.
 */
public final class DeviceConfigFile {
    private final Optional<Path> path;
    private DeviceConfig parsed;
    private NvidiaConfig nvidia;

    private DeviceConfigFile(Optional<Path> path) {
        this.path = requireNonNull(path, "path");
    }

    /** @param path {@code --device-config}, checked to be a file; empty for HAMi's defaults */
    public static DeviceConfigFile of(Optional<Path> path) {
        return new DeviceConfigFile(path);
    }

    public Optional<Path> path() {
        return path;
    }

    /** The parsed config (HAMi's defaults without a file), read on the first call. */
    public synchronized DeviceConfig config() {
        if (parsed == null) {
            parsed = path.map(DeviceConfig::load).orElseGet(DeviceConfig::defaults);
        }
        return parsed;
    }

    /**
     * Only the {@code nvidia:} block (HAMi's defaults without a file), read on the first call: what device
     * registration and the device plugin read. The other vendors' blocks are not built, so a pure-NVIDIA node loads
     * none of their classes.
     */
    public synchronized NvidiaConfig nvidia() {
        if (parsed != null) {
            return parsed.nvidia();
        }
        if (nvidia == null) {
            nvidia = path.map(DeviceConfig::loadNvidia).orElseGet(NvidiaConfig::defaults);
        }
        return nvidia;
    }
}
