package io.tenantgateway.agent.locks.policy;

import static java.util.Objects.requireNonNull;

/** The outcome of {@link LockPolicy}: leave the lock alone, or remove it for a reason. */
public sealed interface LockDecision {
    /** Human-readable explanation, for logs, Events and the debug snapshot. */
    String detail();

    /** Leave the lock where it is. */
    record Keep(String detail) implements LockDecision {
        public Keep {
            requireNonNull(detail, "detail");
        }
    }

    /** Remove the lock (compare-and-swap on the value that was judged). */
    record Release(ReleaseReason reason, String detail) implements LockDecision {
        public Release {
            requireNonNull(reason, "reason");
            requireNonNull(detail, "detail");
        }
    }
}
