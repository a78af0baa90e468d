package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/**
 * What Allocate needs of one container: its name and the literal values of its environment (variables set from
 * {@code valueFrom} are left out: their value is not known before the container starts).
 */
public record ContainerView(String name, Map<String, String> env) {
    public ContainerView {
        requireNonNull(name, "name");
        env = Map.copyOf(requireNonNull(env, "env"));
    }

    public static ContainerView of(String name) {
        return new ContainerView(name, Map.of());
    }
}
