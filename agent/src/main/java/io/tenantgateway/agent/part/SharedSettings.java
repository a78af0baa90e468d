package io.tenantgateway.agent.part;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

/**
 * What every part's flags may build on besides their own: facts that other flags decide, passed as plain values (a
 * part's flags never read another part's). {@code run} makes one from its flags and hands it to each
 * {@link PartFlags#kind}.
 *
 * @param nodeName this node, when known ({@code --node-name}, {@code NODE_NAME}, or a placeholder while it is read from
 *     the API)
 * @param devicesRegistered whether device registration is on ({@code --device-source=mock|nvidia-smi}): the node has
 *     GPUs this agent looks after
 * @param hostRoot where the host's file system is seen from ({@code --device-plugin-host-root}): HAMi-core's
 *     directories are under its {@code usr/local/vgpu}
 * @param podFieldSelector whether lists of this node's pods send {@code spec.nodeName=<node>}
 *     ({@code --pod-field-selector})
 */
public record SharedSettings(Optional<String> nodeName, boolean devicesRegistered, Path hostRoot,
        boolean podFieldSelector) {
    public SharedSettings {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(hostRoot, "hostRoot");
    }
}
