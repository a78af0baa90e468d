package io.tenantgateway.agent.locks;

import java.util.Locale;

/** {@code --allocation-mode}: whether the agent completes HAMi allocations on its node. */
public enum AllocationMode {
    /**
     * The agent plays the device plugin's allocation step: consume the pod's device entries, set
     * {@code bind-phase=success}, release the node lock. The default for the mock device source.
     */
    COMPLETE,
    /**
     * A real device plugin completes allocations; the agent only reports what it would do. Stale
     * locks (expired, dangling, malformed) are still released, by the scheduler's own rules.
     */
    OBSERVE;

    /** Parses a flag value ({@code complete} or {@code observe}, any case). */
    public static AllocationMode parse(String value) {
        if (value != null) {
            for (AllocationMode mode : values()) {
                if (mode.flagValue().equalsIgnoreCase(value.trim())) {
                    return mode;
                }
            }
        }
        throw new IllegalArgumentException("--allocation-mode: " + value + " (expected: complete or observe)");
    }

    public String flagValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}
