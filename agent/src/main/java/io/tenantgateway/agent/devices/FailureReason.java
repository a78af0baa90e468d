package io.tenantgateway.agent.devices;

import java.util.Locale;

/**
 * Why a discovery or registration attempt failed. {@link #label()}, the lowercase name, is the value of the
 * {@code reason} label on {@code tenant_gateway_device_registration_failures_total}; keep the set small and stable
 * (dashboards and alerts match on it: renaming a constant renames its label).
 */
public enum FailureReason {
    /** The configured nvidia-smi binary does not exist or cannot be executed. */
    NVIDIA_SMI_MISSING,
    /** nvidia-smi ran but could not talk to the kernel driver (not loaded, version mismatch). */
    DRIVER_UNAVAILABLE,
    /** Discovery worked but found no GPU; nothing to register. */
    NO_DEVICES,
    /** nvidia-smi exited with a non-zero status for another reason. */
    NVIDIA_SMI_FAILED,
    /** nvidia-smi did not finish within the configured timeout and was killed. */
    NVIDIA_SMI_TIMEOUT,
    /** nvidia-smi printed something that is not the expected CSV. */
    MALFORMED_OUTPUT,
    /** The Node object named in the configuration does not exist (yet). */
    NODE_MISSING,
    /** The API server answered 409 Conflict. */
    CONFLICT,
    /** The API server answered 5xx. */
    SERVER_ERROR,
    /** No answer from the API server: connection refused, reset or timed out. */
    API_UNREACHABLE,
    /** The API server refused the request with another 4xx (RBAC, validation). */
    API_REJECTED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
