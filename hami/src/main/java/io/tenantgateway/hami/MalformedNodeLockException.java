package io.tenantgateway.hami;

/**
 * The value of {@code hami.io/mutex.lock} cannot be parsed. Typed so that callers can branch: the
 * scheduler refuses every Bind on such a node, so the agent reports the value and clears it after
 * the lock timeout (see the agent's lock policy).
 */
public final class MalformedNodeLockException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String value;

    MalformedNodeLockException(String value, String message) {
        super(message);
        this.value = value;
    }

    /** The annotation value as found on the node. */
    public String value() {
        return value;
    }
}
