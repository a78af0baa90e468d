package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.region.DeviceUsage;
import java.util.List;

/**
 * One GPU container's usage and limits, as the monitor exports them.
 *
 * @param source where the figures come from: HAMi-core's region, or only the pod's allocation annotation (before
 *     the container's first CUDA call: limits, no usage)
 * @param devices per device: limits, and usage from a region (zeros from an annotation)
 * @param lastKernelTime the region's {@code last_kernel_time} (unix seconds), 0 when none
 */
public record ContainerUsage(String namespace, String pod, String container, Source source, List<DeviceUsage> devices,
        long lastKernelTime) {
    /** Where a container's figures come from (the {@code limit_source} label). */
    public enum Source {
        /** HAMi-core's shared region: usage and limits. */
        REGION("region"),
        /** The pod's {@code hami.io/vgpu-devices-allocated} annotation: limits only, no region yet. */
        ANNOTATION("annotation");

        private final String label;

        Source(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public ContainerUsage {
        requireNonNull(namespace, "namespace");
        requireNonNull(pod, "pod");
        requireNonNull(container, "container");
        requireNonNull(source, "source");
        devices = List.copyOf(devices);
    }
}
