package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.ResourceNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The lab scheduler's placement: first fit by memory and cores over one node's registered GPUs, with HAMi's
 * per-device rules (split count, memory, cores, exclusive use at 100 % cores). HAMi itself scores nodes and devices
 * (binpack/spread); the lab needs only a deterministic, explainable choice, so it takes the first device that fits,
 * in index order.
 *
 * <p>Pure: no I/O; safe from any thread.
 */
final class FirstFitPlacement {
    private FirstFitPlacement() {
    }

    /**
     * One container's GPU request as HAMi's scheduler reads it from the (already mutated) limits.
     *
     * @param count GPUs ({@code nvidia.com/gpu})
     * @param memoryMiB memory per GPU in MiB ({@code nvidia.com/gpumem}), or 0 when given as a percentage
     * @param memoryPercent percent of each GPU's memory when {@code memoryMiB} is 0 (100 when neither is given)
     * @param cores percent of each GPU's compute ({@code nvidia.com/gpucores}, default 0)
     */
    record GpuRequest(String container, int count, long memoryMiB, int memoryPercent, int cores) {
        GpuRequest {
            requireNonNull(container, "container");
            if (count < 1 || memoryMiB < 0 || memoryPercent < 0 || memoryPercent > 100 || cores < 0 || cores > 100) {
                throw new IllegalArgumentException("container " + container + ": gpu " + count + ", gpumem "
                        + memoryMiB + ", gpumem-percentage " + memoryPercent + ", gpucores " + cores
                        + " (expected: gpu >= 1, gpumem >= 0, percentages 0-100)");
            }
        }

        /** The request in {@code limits}, or empty when the container asks for no GPU. */
        static Optional<GpuRequest> fromLimits(String container, Map<String, String> limits) {
            String gpus = limits.get(ResourceNames.NVIDIA_GPU);
            if (gpus == null) {
                return Optional.empty();
            }
            long memory = number(container, limits, ResourceNames.NVIDIA_GPU_MEMORY, 0);
            long percent = number(container, limits, ResourceNames.NVIDIA_GPU_MEMORY_PERCENTAGE, 0);
            if (memory == 0 && percent == 0) {
                percent = 100; // HAMi: no memory request means the whole memory of each GPU
            }
            return Optional.of(new GpuRequest(container, (int) number(container, limits, ResourceNames.NVIDIA_GPU, 0),
                    memory, (int) percent, (int) number(container, limits, ResourceNames.NVIDIA_GPU_CORES, 0)));
        }

        long memoryOn(GpuDevice device) {
            return memoryMiB > 0 ? memoryMiB : (long) device.devmemMiB() * memoryPercent / 100;
        }

        String describe() {
            return count + " × " + (memoryMiB > 0 ? memoryMiB + " MiB" : memoryPercent + " % memory") + ", " + cores
                    + " % cores";
        }
    }

    /**
     * The integer limit {@code resource} of {@code container}, or {@code absent} when not given (also
     * {@link VendorFirstFitPlacement}'s).
     */
    static long number(String container, Map<String, String> limits, String resource, long absent) {
        String value = limits.get(resource);
        if (value == null) {
            return absent;
        }
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("container " + container + ": " + resource + ": " + value
                    + " (expected: an integer)", e);
        }
    }

    /** What the pods already placed on a device use. */
    record Usage(long memoryMiB, int cores, int pods) {
        static final Usage NONE = new Usage(0, 0, 0);

        Usage plus(long memory, int addedCores) {
            return new Usage(memoryMiB + memory, cores + addedCores, pods + 1);
        }
    }

    /** The outcome: devices for every container, or why the node cannot take the pod. */
    sealed interface Placement permits Fit, Refused {
    }

    /** @param devices one entry per container, in container order (empty for containers without a GPU request) */
    record Fit(List<List<ContainerDevice>> devices) implements Placement {
        Fit {
            devices = List.copyOf(devices);
        }
    }

    record Refused(String reason) implements Placement {
        Refused {
            requireNonNull(reason, "reason");
        }
    }

    /**
     * Places every container's request on {@code devices} (index order), given what is already in use.
     *
     * @param containers one element per container (init containers first), empty for containers without a GPU
     */
    static Placement place(List<GpuDevice> devices, Map<String, Usage> inUse, List<Optional<GpuRequest>> containers) {
        Map<String, Usage> usage = new HashMap<>(inUse);
        List<List<ContainerDevice>> chosen = new ArrayList<>();
        for (Optional<GpuRequest> container : containers) {
            if (container.isEmpty()) {
                chosen.add(List.of());
                continue;
            }
            GpuRequest request = container.get();
            List<ContainerDevice> picked = new ArrayList<>();
            List<String> misfits = new ArrayList<>();
            for (GpuDevice device : devices) {
                if (picked.size() == request.count()) {
                    break;
                }
                if (picked.stream().anyMatch(p -> p.uuid().equals(device.id()))) {
                    continue;
                }
                Usage used = usage.getOrDefault(device.id(), Usage.NONE);
                String misfit = misfit(device, used, request);
                if (misfit != null) {
                    misfits.add(shortId(device) + " " + misfit);
                    continue;
                }
                long memory = request.memoryOn(device);
                picked.add(ContainerDevice.nvidia(device.id(), memory, request.cores()));
                usage.put(device.id(), used.plus(memory, request.cores()));
            }
            if (picked.size() < request.count()) {
                String why = devices.isEmpty() ? "no GPUs registered" : String.join("; ", misfits);
                if (!devices.isEmpty() && (!picked.isEmpty() || misfits.isEmpty())) {
                    why = "only " + picked.size() + " of " + request.count() + " GPUs fit"
                            + (misfits.isEmpty() ? "" : "; " + why);
                }
                return new Refused("no GPU fits container " + request.container() + " (" + request.describe() + "): "
                        + why);
            }
            chosen.add(picked);
        }
        return new Fit(chosen);
    }

    /** Why {@code device} cannot take one GPU of {@code request}, in HAMi's order of checks; null when it fits. */
    private static String misfit(GpuDevice device, Usage used, GpuRequest request) {
        if (!device.healthy()) {
            return "unhealthy";
        }
        if (!device.type().toUpperCase(Locale.ROOT).contains("NVIDIA")) {
            return "type " + device.type() + " is not NVIDIA";
        }
        if (used.pods() >= device.count()) {
            return "shared by " + used.pods() + " of " + device.count() + " pods (split count)";
        }
        long freeMemory = device.devmemMiB() - used.memoryMiB();
        if (freeMemory < request.memoryOn(device)) {
            return "memory: " + Math.max(0, freeMemory) + " of " + device.devmemMiB() + " MiB free, "
                    + request.memoryOn(device) + " requested";
        }
        int freeCores = device.devcore() - used.cores();
        if (freeCores < request.cores()) {
            return "cores: " + Math.max(0, freeCores) + " % free, " + request.cores() + " % requested";
        }
        if (request.cores() == 100 && used.pods() > 0) {
            return "exclusive use (100 % cores) requested, shared by " + used.pods() + " pods";
        }
        if (request.cores() == 0 && used.cores() >= device.devcore()) {
            return "compute fully allocated";
        }
        return null;
    }

    /** {@code #0 GPU-1a2b3c4d} — enough to tell a node's devices apart in one line of evidence. */
    static String shortId(GpuDevice device) {
        String id = device.id();
        return "#" + device.index() + " " + (id.length() > 12 ? id.substring(0, 12) : id);
    }
}
