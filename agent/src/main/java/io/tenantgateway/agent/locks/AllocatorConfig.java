package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.policy.HamiCoreSettings;
import java.nio.file.Path;

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
 */
public record AllocatorConfig(String nodeName, HamiCoreSettings hamiCore, Path hostRoot, Backoff retry,
        boolean podFieldSelector) {
    public AllocatorConfig {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(hamiCore, "hamiCore");
        requireNonNull(hostRoot, "hostRoot");
        requireNonNull(retry, "retry");
        if (!hostRoot.isAbsolute()) {
            throw new IllegalArgumentException("--device-plugin-host-root: " + hostRoot + " (expected: an absolute"
                    + " path, / in the DaemonSet)");
        }
        if (retry.maxAttempts() == Backoff.UNLIMITED) {
            throw new IllegalArgumentException("retry: " + retry + " (expected: a bounded number of attempts, as"
                    + " HAMi's 5)");
        }
    }

    /** HAMi's defaults: HAMi-core under {@code /usr/local}, host paths as they are, HAMi's node-lock backoff. */
    public static AllocatorConfig defaults(String nodeName) {
        return new AllocatorConfig(nodeName, HamiCoreSettings.DEFAULTS, Path.of("/"), Backoff.HAMI_NODE_LOCK, true);
    }

    public AllocatorConfig withHamiCore(HamiCoreSettings settings) {
        return new AllocatorConfig(nodeName, settings, hostRoot, retry, podFieldSelector);
    }

    public AllocatorConfig withHostRoot(Path root) {
        return new AllocatorConfig(nodeName, hamiCore, root, retry, podFieldSelector);
    }

    public AllocatorConfig withRetry(Backoff backoff) {
        return new AllocatorConfig(nodeName, hamiCore, hostRoot, backoff, podFieldSelector);
    }

    public AllocatorConfig withPodFieldSelector(boolean enabled) {
        return new AllocatorConfig(nodeName, hamiCore, hostRoot, retry, enabled);
    }

    /** Where a host path is seen from this process. */
    public Path local(String hostPath) {
        return hostRoot.resolve(hostPath.startsWith("/") ? hostPath.substring(1) : hostPath);
    }
}
