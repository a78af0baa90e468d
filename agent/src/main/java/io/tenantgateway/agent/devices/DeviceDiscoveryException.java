package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

/** Discovery failed; {@link #reason()} says why in a form callers can branch and count on. */
public final class DeviceDiscoveryException extends Exception {
    private static final long serialVersionUID = 1L;

    private final FailureReason reason;

    public DeviceDiscoveryException(FailureReason reason, String message) {
        super(message);
        this.reason = requireNonNull(reason, "reason");
    }

    public DeviceDiscoveryException(FailureReason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = requireNonNull(reason, "reason");
    }

    public FailureReason reason() {
        return reason;
    }
}
