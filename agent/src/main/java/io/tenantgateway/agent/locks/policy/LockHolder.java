package io.tenantgateway.agent.locks.policy;

import static java.util.Objects.requireNonNull;

/**
 * What the API server says about the pod a node lock names, reduced to what {@link LockPolicy}
 * decides on.
 *
 * @param state where the pod stands relative to this node
 * @param nodeName the pod's {@code spec.nodeName} ({@code ""} when unbound or gone)
 * @param podPhase the pod's {@code status.phase} ({@code ""} when unknown)
 * @param bindPhase the pod's {@code hami.io/bind-phase} ({@code ""} when absent)
 */
public record LockHolder(State state, String nodeName, String podPhase, String bindPhase) {
    /** Where the holder stands. */
    public enum State {
        /** The pod does not exist (404). */
        GONE,
        /** The pod's phase is Succeeded or Failed. */
        FINISHED,
        /** The pod is bound to a node other than this one. */
        BOUND_ELSEWHERE,
        /** The pod is not bound yet: a Bind is in progress. */
        NOT_BOUND,
        /** The pod is bound to this node. */
        BOUND_HERE
    }

    public LockHolder {
        requireNonNull(state, "state");
        requireNonNull(nodeName, "nodeName");
        requireNonNull(podPhase, "podPhase");
        requireNonNull(bindPhase, "bindPhase");
    }

    public static LockHolder gone() {
        return new LockHolder(State.GONE, "", "", "");
    }

    /** Classifies an existing pod; {@code null} fields are treated as empty. */
    public static LockHolder of(String podNodeName, String podPhase, String bindPhase, String thisNode) {
        String nodeName = podNodeName == null ? "" : podNodeName;
        String phase = podPhase == null ? "" : podPhase;
        String bind = bindPhase == null ? "" : bindPhase;
        State state;
        if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
            state = State.FINISHED;
        } else if (nodeName.isEmpty()) {
            state = State.NOT_BOUND;
        } else if (nodeName.equals(thisNode)) {
            state = State.BOUND_HERE;
        } else {
            state = State.BOUND_ELSEWHERE;
        }
        return new LockHolder(state, nodeName, phase, bind);
    }
}
