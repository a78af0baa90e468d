package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;

/**
 * Configuration of the {@link AllocationController}.
 *
 * @param nodeName this node ({@code --node-name}, env {@code NODE_NAME}); the controller never acts
 *        on any other node
 * @param mode {@code --allocation-mode}
 * @param nodeLockTimeout {@code --node-lock-timeout}: the scheduler's lock expiry (HAMi: 5m, env
 *        {@code HAMI_NODELOCK_EXPIRE}); keep both equal
 * @param reapInterval how often the node lock is re-judged without an event (expiry is a matter of
 *        time, and a holder that was never on this node sends no event)
 * @param retryBackoff retries of conflicting or failing writes (HAMi's strategy by default)
 * @param podFieldSelector send {@code spec.nodeName=<node>} with the pod watch. True for a real API
 *        server; false against fabric8's CRUD mock server, which matches nothing with it. Pods are
 *        always filtered on the client side too.
 * @param recentActionLimit how many recent actions {@link AllocationController#snapshot()} keeps
 * @param startTimeout how long {@code start()} waits for the informers' first list
 */
public record AllocationConfig(
        String nodeName,
        AllocationMode mode,
        Duration nodeLockTimeout,
        Duration reapInterval,
        Backoff retryBackoff,
        boolean podFieldSelector,
        int recentActionLimit,
        Duration startTimeout) {

    public static final Duration DEFAULT_NODE_LOCK_TIMEOUT = io.tenantgateway.agent.locks.policy.LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT;
    public static final Duration DEFAULT_REAP_INTERVAL = Duration.ofSeconds(10);
    public static final int DEFAULT_RECENT_ACTION_LIMIT = 50;
    public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(30);

    public AllocationConfig {
        requireNonNull(nodeName, "nodeName");
        if (nodeName.isBlank()) {
            throw new ConfigException("--node-name", "\"" + nodeName + "\"", "this node's name, e.g. from NODE_NAME");
        }
        requireNonNull(mode, "mode");
        requirePositive("--node-lock-timeout", nodeLockTimeout);
        requirePositive("reapInterval", reapInterval);
        requireNonNull(retryBackoff, "retryBackoff");
        if (recentActionLimit < 1) {
            throw new IllegalArgumentException("recentActionLimit: " + recentActionLimit + " (expected: > 0)");
        }
        requirePositive("startTimeout", startTimeout);
    }

    /** Production defaults for {@code nodeName}: observe mode, 5m timeout, HAMi's retry strategy, field selector on. */
    public static AllocationConfig defaults(String nodeName) {
        return new AllocationConfig(nodeName, AllocationMode.OBSERVE, DEFAULT_NODE_LOCK_TIMEOUT, DEFAULT_REAP_INTERVAL,
                Backoff.HAMI_NODE_LOCK, true, DEFAULT_RECENT_ACTION_LIMIT, DEFAULT_START_TIMEOUT);
    }

    /** This configuration for {@code node} (a name discovered from the agent's pod after the flags were checked). */
    public AllocationConfig withNodeName(String node) {
        return new AllocationConfig(node, mode, nodeLockTimeout, reapInterval, retryBackoff, podFieldSelector,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withMode(AllocationMode newMode) {
        return new AllocationConfig(nodeName, newMode, nodeLockTimeout, reapInterval, retryBackoff, podFieldSelector,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withNodeLockTimeout(Duration timeout) {
        return new AllocationConfig(nodeName, mode, timeout, reapInterval, retryBackoff, podFieldSelector,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withReapInterval(Duration interval) {
        return new AllocationConfig(nodeName, mode, nodeLockTimeout, interval, retryBackoff, podFieldSelector,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withRetryBackoff(Backoff backoff) {
        return new AllocationConfig(nodeName, mode, nodeLockTimeout, reapInterval, backoff, podFieldSelector,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withPodFieldSelector(boolean enabled) {
        return new AllocationConfig(nodeName, mode, nodeLockTimeout, reapInterval, retryBackoff, enabled,
                recentActionLimit, startTimeout);
    }

    public AllocationConfig withStartTimeout(Duration timeout) {
        return new AllocationConfig(nodeName, mode, nodeLockTimeout, reapInterval, retryBackoff, podFieldSelector,
                recentActionLimit, timeout);
    }

    private static void requirePositive(String name, Duration value) {
        requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            // A flag's value is the user's to fix; the other settings are the caller's.
            throw name.startsWith("--") ? new ConfigException(name, value, "> 0")
                    : new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }
}
