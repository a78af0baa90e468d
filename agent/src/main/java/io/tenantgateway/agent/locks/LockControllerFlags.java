package io.tenantgateway.agent.locks;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code run}'s allocation / node-lock controller flags, as {@link AllocationConfig}. A picocli mixin; when the
 * controller is on by default and which mode it takes by default depend on the other parts, which {@code run}
 * composes.
 */
public final class LockControllerFlags {
    @Option(names = "--enable-lock-controller", arity = "0..1", fallbackValue = "true", order = 5,
            paramLabel = "true|false", description = "Run the allocation/node-lock controller. Default: true when"
                    + " devices are registered (--device-source), else false.")
    Boolean enableLockController;

    @Option(names = "--allocation-mode", order = 5, paramLabel = "device-plugin|observe",
            description = "Who completes HAMi allocations here: this agent's device plugin (device-plugin) or another"
                    + " one, HAMi's (observe). Default: device-plugin with --device-plugin=true, else observe.")
    String allocationMode;

    @Option(names = "--node-lock-timeout", defaultValue = "5m", order = 5, paramLabel = "DURATION",
            description = "HAMi node-lock expiry (keep equal to the scheduler's). Default: ${DEFAULT-VALUE}.")
    String nodeLockTimeout;

    @Option(names = "--pod-field-selector", arity = "0..1", defaultValue = "true", fallbackValue = "true",
            hidden = true, order = 5, paramLabel = "true|false",
            description = "Send spec.nodeName=NODE with the lock controller's pod watch. Off only against fabric8's"
                    + " CRUD mock API server (the lab), which matches nothing with it; pods are filtered client-side"
                    + " anyway. Default: ${DEFAULT-VALUE}.")
    boolean podFieldSelector;

    /**
     * Whether the controller runs: {@code --enable-lock-controller}, else {@code byDefault} (on when devices are
     * registered).
     */
    public boolean enabled(boolean byDefault) {
        return enableLockController != null ? enableLockController : byDefault;
    }

    /** {@code --allocation-mode}, when given. */
    public Optional<AllocationMode> mode() {
        return allocationMode == null ? Optional.empty() : Optional.of(AllocationMode.parse(allocationMode));
    }

    /** {@code --pod-field-selector}: also how the device plugin's Allocate lists pods. */
    public boolean podFieldSelector() {
        return podFieldSelector;
    }

    /**
     * The controller, checked.
     *
     * @param nodeName this node, when known (required)
     * @param mode {@link #mode()}, or the default the other parts give
     */
    public AllocationConfig config(Optional<String> nodeName, AllocationMode mode) {
        String node = nodeName.orElseThrow(() -> new ConfigException("--enable-lock-controller", "no node name",
                "--node-name or env NODE_NAME"));
        return AllocationConfig.defaults(node).withMode(mode)
                .withNodeLockTimeout(GoDuration.parse("--node-lock-timeout", nodeLockTimeout))
                .withPodFieldSelector(podFieldSelector);
    }
}
