package io.tenantgateway.agent.devices;

/**
 * Why a discovery or registration attempt failed. {@link #label()} is the value of the
 * {@code reason} label on {@code tenant_gateway_device_registration_failures_total}; keep the
 * set small and stable (dashboards and alerts match on it).
 */
public enum FailureReason {
    /** The configured nvidia-smi binary does not exist or cannot be executed. */
    NVIDIA_SMI_MISSING("nvidia_smi_missing"),
    /** nvidia-smi ran but could not talk to the kernel driver (not loaded, version mismatch). */
    DRIVER_UNAVAILABLE("driver_unavailable"),
    /** Discovery worked but found no GPU; nothing to register. */
    NO_DEVICES("no_devices"),
    /** nvidia-smi exited with a non-zero status for another reason. */
    NVIDIA_SMI_FAILED("nvidia_smi_failed"),
    /** nvidia-smi did not finish within the configured timeout and was killed. */
    NVIDIA_SMI_TIMEOUT("nvidia_smi_timeout"),
    /** nvidia-smi printed something that is not the expected CSV. */
    MALFORMED_OUTPUT("malformed_output"),
    /** The Node object named in the configuration does not exist (yet). */
    NODE_MISSING("node_missing"),
    /** The API server answered 409 Conflict. */
    CONFLICT("conflict"),
    /** The API server answered 5xx. */
    SERVER_ERROR("server_error"),
    /** No answer from the API server: connection refused, reset or timed out. */
    API_UNREACHABLE("api_unreachable"),
    /** The API server refused the request with another 4xx (RBAC, validation). */
    API_REJECTED("api_rejected");

    private final String label;

    FailureReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
