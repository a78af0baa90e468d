package io.tenantgateway.agent.locks;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.FlagValues;
import java.util.Optional;

/**
 * Who completes HAMi allocations on this node, which decides what the lock controller may release
 * ({@code --allocation-mode}: {@link FlagValues}).
 */
public enum AllocationMode {
    /**
     * This agent's device plugin completes them in kubelet's Allocate ({@code --device-plugin=true}): consume the
     * pod's entries, {@code bind-phase=success}, release the node lock. The controller reports pods still
     * allocating and reaps stale locks, and also releases the lock of a holder already {@code success}/{@code failed}
     * (an agent stopped between the pod write and the release).
     */
    DEVICE_PLUGIN,
    /**
     * Another device plugin (HAMi's) completes them: the controller only reports what it sees and releases stale
     * locks (expired, dangling, malformed) by the scheduler's own rules.
     */
    OBSERVE;

    /** Parses a flag value ({@code device-plugin} or {@code observe}, any case). */
    public static AllocationMode parse(String value) {
        Optional<AllocationMode> mode = FlagValues.find(AllocationMode.class, value);
        if (mode.isPresent()) {
            return mode.get();
        }
        if (value != null && value.strip().equalsIgnoreCase("complete")) {
            throw new ConfigException("--allocation-mode", "complete", "observe or device-plugin; the agent"
                    + " completes allocations in its device plugin's Allocate now, as HAMi's plugin does:"
                    + " --device-plugin=true");
        }
        throw new ConfigException("--allocation-mode", value, FlagValues.list(AllocationMode.class, " or "));
    }

    public String flagValue() {
        return FlagValues.of(this);
    }
}
