package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import java.util.Optional;

/** HAMi's NVIDIA admission mutation ({@code pkg/device/nvidia} {@code MutateAdmission}), configured by {@link NvidiaConfig}. */
public final class NvidiaVendor implements Vendor {
    /** Env var HAMi-core reads the task priority from. */
    public static final String TASK_PRIORITY_ENV = "CUDA_TASK_PRIORITY";
    /** Env var HAMi-core reads the core utilization policy from. */
    public static final String CORE_POLICY_ENV = "GPU_CORE_UTILIZATION_POLICY";
    /** Hides every GPU from containers that did not ask for one (with {@code overwriteEnv}). */
    public static final String VISIBLE_DEVICES_ENV = "NVIDIA_VISIBLE_DEVICES";
    /** A container asking for a whole GPU's memory gets all of its cores. */
    static final long EXCLUSIVE_CORES = 100;

    private final NvidiaConfig config;

    public NvidiaVendor(NvidiaConfig config) {
        this.config = requireNonNull(config, "config");
    }

    public NvidiaConfig config() {
        return config;
    }

    @Override
    public String name() {
        return "NVIDIA";
    }

    @Override
    public Optional<String> validate(ContainerNode container) {
        // HAMi's validateMemoryPercentage reads the limit, else the request.
        Optional<Quantity> percentage = container.limitOrRequest(config.resourceMemoryPercentageName());
        if (percentage.isPresent()) {
            long value = percentage.get().value();
            if (value < 0 || value > 100) {
                return Optional.of("invalid " + config.resourceMemoryPercentageName() + " value " + value
                        + " in container " + container.name() + ": must be an integer between 0 and 100");
            }
        }
        return Optional.empty();
    }

    @Override
    public boolean mutate(ContainerNode container, PodNode pod) {
        // Same order as HAMi, so appended env entries land in the same positions.
        container.limit(config.resourcePriorityName())
                .ifPresent(priority -> container.appendEnv(TASK_PRIORITY_ENV, Long.toString(priority.value())));
        if (!config.gpuCorePolicy().equals("default")) {
            container.appendEnv(CORE_POLICY_ENV, config.gpuCorePolicy());
        }
        boolean hasResource = addDefaultGpuCount(container);
        if (addExclusiveCores(container)) {
            hasResource = true;
        }
        if (hasResource && !config.runtimeClassName().isEmpty() && !pod.hasRuntimeClassName()) {
            pod.setRuntimeClassName(config.runtimeClassName());
        }
        if (!hasResource && config.overwriteEnv()) {
            container.appendEnv(VISIBLE_DEVICES_ENV, "none");
        }
        return hasResource;
    }

    /** A GPU count is present, or memory/cores are asked for and {@code defaultGPUNum} fills the count in. */
    private boolean addDefaultGpuCount(ContainerNode container) {
        if (container.hasLimit(config.resourceCountName())) {
            return true;
        }
        boolean asksForShare = container.hasLimit(config.resourceCoreName())
                || container.hasLimit(config.resourceMemoryName())
                || container.hasLimit(config.resourceMemoryPercentageName());
        if (asksForShare && config.defaultGpuNum() > 0) {
            container.putLimit(config.resourceCountName(), Quantity.format(config.defaultGpuNum()));
            return true;
        }
        return false;
    }

    /**
     * A GPU without cores whose memory is exclusive (no memory asked for, or 100 percent) gets {@code gpucores: 100}
     * in its limits, so the scheduler never packs another task onto a card this one expects to own. As HAMi's
     * {@code defaultExclusiveCoreIfNeeded}, every input is read from the limits, else the requests: a container
     * declaring {@code nvidia.com/gpu} only under {@code requests} gets the cores (and with them the scheduler),
     * while cores or memory declared under {@code requests} count as given.
     */
    private boolean addExclusiveCores(ContainerNode container) {
        if (!container.declares(config.resourceCountName()) || config.resourceCoreName().isEmpty()
                || container.declares(config.resourceCoreName())) {
            return false;
        }
        Optional<Quantity> percentage = container.limitOrRequest(config.resourceMemoryPercentageName());
        boolean exclusive;
        if (percentage.isPresent()) {
            exclusive = percentage.get().value() == 100;
        } else {
            exclusive = config.resourceMemoryName().isEmpty() || !container.declares(config.resourceMemoryName());
        }
        if (!exclusive) {
            return false;
        }
        container.putLimit(config.resourceCoreName(), Quantity.format(EXCLUSIVE_CORES));
        return true;
    }

    @Override
    public QuotaResources quotaResources() {
        return new QuotaResources(blankToNull(config.resourceMemoryName()), blankToNull(config.resourceCoreName()),
                config.memoryFactor(), Annotations.POD_DEVICES_ALLOCATED);
    }

    @Override
    public DeviceRequest request(ContainerNode container) {
        long count = wholeLimit(container, config.resourceCountName());
        if (count <= 0) {
            return DeviceRequest.NONE;
        }
        long memory = wholeLimit(container, config.resourceMemoryName());
        long factor = config.memoryFactor();
        memory = memory > Long.MAX_VALUE / factor ? Long.MAX_VALUE : memory * factor; // MiB, as the scheduler counts
        return new DeviceRequest(count, memory, wholeLimit(container, config.resourceCoreName()));
    }

    /** HAMi's quota {@code getRequest}: the limit, else the request, when it is a whole number. */
    private static long wholeLimit(ContainerNode container, String resource) {
        return container.limitOrRequest(resource).flatMap(Quantity::exactLong).orElse(0L);
    }

    private static String blankToNull(String value) {
        return value.isEmpty() ? null : value;
    }
}
