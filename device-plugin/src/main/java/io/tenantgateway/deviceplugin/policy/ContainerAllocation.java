package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The answer for one container: the environment and mounts kubelet gives it (device specs are never passed: the
 * NVIDIA container runtime adds the devices from {@code NVIDIA_VISIBLE_DEVICES}, HAMi's chart default
 * {@code PASS_DEVICE_SPECS=false}).
 *
 * @param envs in the order HAMi sets them
 * @param mounts in the order HAMi adds them
 */
public record ContainerAllocation(Map<String, String> envs, List<Mount> mounts) {
    public ContainerAllocation {
        envs = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(envs, "envs")));
        mounts = List.copyOf(requireNonNull(mounts, "mounts"));
    }
}
