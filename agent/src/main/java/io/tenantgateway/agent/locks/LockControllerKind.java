package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.common.time.GoDuration;
import java.util.Map;
import java.util.Optional;

/** The lock controller's entry in the list of parts: {@code lock-controller=} in the effective configuration. */
public final class LockControllerKind implements PartKind {
    private final Optional<AllocationConfig> config;

    public LockControllerKind(Optional<AllocationConfig> config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public String name() {
        return LockControllerPart.NAME;
    }

    @Override
    public Optional<Part> part() {
        return config.<Part>map(allocation -> new LockControllerPart(allocation));
    }

    @Override
    public void describe(Map<String, String> out) {
        out.put("lock-controller", config.map(a -> a.mode() + " node-lock-timeout="
                + GoDuration.format(a.nodeLockTimeout())).orElse("off"));
    }
}
