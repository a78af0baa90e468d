package io.tenantgateway.deviceplugin;

/** An Allocate that fails; the message goes back to kubelet as the call's error. */
public final class AllocationException extends Exception {
    private static final long serialVersionUID = 1L;

    public AllocationException(String message) {
        super(message);
    }

    public AllocationException(String message, Throwable cause) {
        super(message, cause);
    }
}
