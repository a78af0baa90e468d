package io.tenantgateway.agent.locks.policy;

import java.util.Locale;

/** Why the agent removed a node lock; the lowercase name is the metric label and the Event text. */
public enum ReleaseReason {
    /** The holder's allocation was completed (bind-phase {@code success}). */
    ALLOCATED,
    /** The lock is older than the node-lock timeout (the scheduler's own takeover rule). */
    EXPIRED,
    /** The holder no longer exists, has finished, or is bound to another node. */
    DANGLING,
    /** The holder's allocation failed (bind-phase {@code failed}). */
    FAILED,
    /** The value could not be parsed and was first seen longer than the timeout ago. */
    MALFORMED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
