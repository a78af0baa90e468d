package io.tenantgateway.webhook.policy;

/**
 * A vendor backend's error while mutating a container (HAMi's {@code MutateAdmission} returning an error): the
 * first one aborts the admission with HTTP 500 and exactly this message, no patch.
 */
public final class VendorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What controller-runtime answers when HAMi v2.9 writes into a nil map and panics. */
    public static final String NIL_MAP_PANIC = "panic: assignment to entry in nil map [recovered]";

    public VendorException(String message) {
        super(message, null, false, false);
    }

    /** HAMi v2.9's nil-map panic (reproduced only in {@code --hami-compat=v2.9}). */
    static VendorException nilMapPanic() {
        return new VendorException(NIL_MAP_PANIC);
    }
}
