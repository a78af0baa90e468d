package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

/** One mount of an Allocate answer (kubelet's {@code Mount}). */
public record Mount(String containerPath, String hostPath, boolean readOnly) {
    public Mount {
        requireNonNull(containerPath, "containerPath");
        requireNonNull(hostPath, "hostPath");
    }
}
