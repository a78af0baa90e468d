package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.policy.HamiCoreSettings;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Configuration of the {@link HamiAllocator}.
 *
 * @param nodeName this node; only its lock and the pods meant for it are ever touched
 * @param hamiCore where HAMi-core lives on the host and how it is tuned
 * @param hostRoot where the host's file system is seen from this process ({@code /} in the DaemonSet, which mounts
 *     {@code /usr/local/vgpu} and {@code /tmp/vgpulock} at their host paths; a directory in tests and the lab): the
 *     per-container cache directories are created below it, the answer names the host paths
 * @param retry HAMi's node-lock strategy: attempts and waits of a conflicting lock release or pod write
 * @param podFieldSelector send {@code spec.nodeName=<node>} when pods are listed (off only against fabric8's CRUD
 *     mock server, which matches nothing with it); pods are always filtered client-side too
 * @param failureRetry waits between the attempts to write a failed allocation's bookkeeping the API did not take
 *     (bind-phase failed, Warning Event, own lock release); unlimited: a pending record lives until written or moot
 * @param pendingFailureLimit how many pods may wait for that bookkeeping at once; a failure beyond it is logged,
 *     counted ({@code overflow}) and left to the lock controller and HAMi's lock expiry
 */
public record AllocatorConfig(String nodeName, HamiCoreSettings hamiCore, Path hostRoot, Backoff retry,
        boolean podFieldSelector, Backoff failureRetry, int pendingFailureLimit) {
    /**
     * 250 ms, doubling, capped at 2 s, up to 20 % more: one GET every ~2 s per pending pod while the API is down, and
     * the bookkeeping written at most ~2.4 s after it answers again (well before HAMi's 5-minute lock expiry).
     */
    public static final Backoff DEFAULT_FAILURE_RETRY = Backoff.exponential(Duration.ofMillis(250))
            .withCap(Duration.ofSeconds(2)).withJitter(0.2);
    /**
     * 128 pods: more than kubelet's default {@code --max-pods} (110), so every pod a node can hold fits; a record is a
     * few hundred bytes (pod key, uid, bind-time, reason, kubelet's device IDs).
     */
    public static final int DEFAULT_PENDING_FAILURE_LIMIT = 128;

    public AllocatorConfig {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(hamiCore, "hamiCore");
        requireNonNull(hostRoot, "hostRoot");
        requireNonNull(retry, "retry");
        if (!hostRoot.isAbsolute()) {
            throw new ConfigException("--device-plugin-host-root", hostRoot, "an absolute path, / in the DaemonSet");
        }
        if (retry.maxAttempts() == Backoff.UNLIMITED) {
            throw new IllegalArgumentException("retry: " + retry + " (expected: a bounded number of attempts, as"
                    + " HAMi's 5)");
        }
        requireNonNull(failureRetry, "failureRetry");
        if (pendingFailureLimit < 1) {
            throw new IllegalArgumentException("pendingFailureLimit: " + pendingFailureLimit + " (expected: >= 1)");
        }
    }

    /** HAMi's defaults: HAMi-core under {@code /usr/local}, host paths as they are, HAMi's node-lock backoff. */
    public static AllocatorConfig defaults(String nodeName) {
        return new AllocatorConfig(nodeName, HamiCoreSettings.DEFAULTS, Path.of("/"), Backoff.HAMI_NODE_LOCK, true,
                DEFAULT_FAILURE_RETRY, DEFAULT_PENDING_FAILURE_LIMIT);
    }

    /** This configuration for {@code node} (a name discovered from the agent's pod after the flags were checked). */
    public AllocatorConfig withNodeName(String node) {
        return new AllocatorConfig(node, hamiCore, hostRoot, retry, podFieldSelector, failureRetry,
                pendingFailureLimit);
    }

    public AllocatorConfig withHamiCore(HamiCoreSettings settings) {
        return new AllocatorConfig(nodeName, settings, hostRoot, retry, podFieldSelector, failureRetry,
                pendingFailureLimit);
    }

    public AllocatorConfig withHostRoot(Path root) {
        return new AllocatorConfig(nodeName, hamiCore, root, retry, podFieldSelector, failureRetry,
                pendingFailureLimit);
    }

    public AllocatorConfig withRetry(Backoff backoff) {
        return new AllocatorConfig(nodeName, hamiCore, hostRoot, backoff, podFieldSelector, failureRetry,
                pendingFailureLimit);
    }

    public AllocatorConfig withPodFieldSelector(boolean enabled) {
        return new AllocatorConfig(nodeName, hamiCore, hostRoot, retry, enabled, failureRetry,
                pendingFailureLimit);
    }

    public AllocatorConfig withFailureRetry(Backoff backoff, int limit) {
        return new AllocatorConfig(nodeName, hamiCore, hostRoot, retry, podFieldSelector, backoff, limit);
    }

    /** Where a host path is seen from this process. */
    public Path local(String hostPath) {
        return hostRoot.resolve(hostPath.startsWith("/") ? hostPath.substring(1) : hostPath);
    }
}
