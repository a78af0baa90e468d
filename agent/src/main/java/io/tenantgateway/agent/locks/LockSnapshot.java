package io.tenantgateway.agent.locks;

import java.util.List;

/**
 * What {@link AllocationController} knows now, for a {@code /debug/locks} endpoint.
 *
 * @param node this node
 * @param mode the allocation mode
 * @param synced whether both informers have listed once (readiness)
 * @param lockValue the node's current {@code hami.io/mutex.lock} as last seen, {@code null} when none
 * @param lockVerdict the last judgement of that value ("held by …", "malformed …"), {@code ""} when none
 * @param reapPasses how many times the node lock has been judged since start
 * @param recentActions the most recent actions, oldest first
 */
public record LockSnapshot(
        String node,
        AllocationMode mode,
        boolean synced,
        String lockValue,
        String lockVerdict,
        long reapPasses,
        List<LockAction> recentActions) {
    public LockSnapshot {
        recentActions = List.copyOf(recentActions);
    }
}
