package io.tenantgateway.tools.lab;

import static io.tenantgateway.tools.lab.FirstFitPlacement.number;
import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import io.tenantgateway.tools.lab.FirstFitPlacement.Fit;
import io.tenantgateway.tools.lab.FirstFitPlacement.Placement;
import io.tenantgateway.tools.lab.FirstFitPlacement.Refused;
import io.tenantgateway.tools.lab.FirstFitPlacement.Usage;
import io.tenantgateway.webhook.policy.AscendChip;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The lab scheduler's placement for Hygon DCU and Ascend chips, {@link FirstFitPlacement}'s sibling: one vendor's
 * requests over the devices the node registered for that vendor ({@code hami.io/node-dcu-register},
 * {@code hami.io/node-register-<CW>}, read with {@code RegisterCodec}), given what pods already placed there hold.
 * The per-device checks are HAMi v2.10's Fit, in its order (device-plugin/VENDOR-PLUGINS.md §1.7, §5.2): health,
 * type, split count ({@code Count > Used}), memory left ≥ memreq (a request without memory takes the whole device),
 * cores left, exclusive use (100 cores out of 100 only on an unused device), no core-less request on a device whose
 * cores are all taken. Ascend in {@code hami-core} mode counts cores out of 100, otherwise out of the registered
 * {@code devcore} (the chip's aiCore).
 *
 * <p>How it differs from HAMi, which the lab does not need: HAMi scores the nodes and the devices (binpack/spread)
 * and walks the scored devices from the end; here the first device that fits, in register order, is taken, so the
 * choice is deterministic and explainable. Not done: Ascend 910's NetworkID grouping (HAMi collects every fitting
 * device and takes the largest NetworkID group for count > 1) and 910C's card pairs; the type and UUID filter
 * annotations ({@code hygon.com/use-dcutype}, {@code hami.io/use-<CW>-uuid}, …); the mutex scheduling policy; and
 * v2.10's peak accounting of init containers (here an init container's devices count as held, like a regular
 * container's). A device counts for a request when its registered type contains the vendor's common word (case
 * insensitive), as HAMi's {@code getNodeResources}, but only among the vendor's own register key.
 *
 * <p>Pure: no I/O; safe from any thread.
 */
final class VendorFirstFitPlacement {
    /** Hygon's default cores when the container names none: the whole device. */
    static final int HYGON_DEFAULT_CORES = 100;

    private VendorFirstFitPlacement() {
    }

    /**
     * One container's request for one vendor, as HAMi's {@code GenerateResourceRequests} reads the (mutated) limits.
     *
     * @param count devices
     * @param memoryMiB memory per device in MiB (× the vendor's memoryFactor); 0: the whole device
     * @param cores per device: percent (Hygon, Ascend {@code hami-core}) or AI cores (Ascend templates)
     */
    record DeviceRequest(String container, int count, long memoryMiB, int cores) {
        DeviceRequest {
            requireNonNull(container, "container");
            if (count < 1 || memoryMiB < 0 || cores < 0) {
                throw new IllegalArgumentException("container " + container + ": count " + count + ", memory "
                        + memoryMiB + ", cores " + cores + " (expected: count >= 1, memory >= 0, cores >= 0)");
            }
        }

        /**
         * Hygon: count {@code hygon.com/dcunum}, memory {@code hygon.com/dcumem} × {@code memoryFactor}, cores
         * {@code hygon.com/dcucores} (default 100). Empty when the container asks for no DCU, or, as in HAMi, when
         * a value is out of range (count not 1…2³¹−1, negative memory or cores).
         */
        static Optional<DeviceRequest> hygon(String container, Map<String, String> limits, int memoryFactor) {
            NodeVendor v = NodeVendor.HYGON;
            return of(container, limits, v.resourceName(), v.memoryResource(), v.coreResource(), memoryFactor,
                    HYGON_DEFAULT_CORES);
        }

        /**
         * One Ascend chip: count {@code huawei.com/<CW>}, memory {@code <CW>-memory} × the chip's memoryFactor
         * (already a template's size: the webhook rounded it; HAMi's Fit takes it as it is and names the template
         * only when writing {@code huawei.com/<CW>}), cores {@code <CW>-core} (default 0).
         */
        static Optional<DeviceRequest> ascend(String container, Map<String, String> limits, AscendChip chip) {
            return of(container, limits, chip.resourceName(), chip.resourceMemoryName(), chip.resourceCoreName(),
                    chip.memoryFactor(), 0);
        }

        private static Optional<DeviceRequest> of(String container, Map<String, String> limits, String countName,
                String memoryName, String coreName, int memoryFactor, int defaultCores) {
            if (!limits.containsKey(countName)) {
                return Optional.empty();
            }
            long count = number(container, limits, countName, 0);
            long memory = number(container, limits, memoryName, 0);
            long cores = coreName.isEmpty() ? defaultCores : number(container, limits, coreName, defaultCores);
            if (count < 1 || count > Integer.MAX_VALUE || memory < 0 || memory > Integer.MAX_VALUE || cores < 0
                    || cores > Integer.MAX_VALUE) {
                return Optional.empty();
            }
            return Optional.of(new DeviceRequest(container, (int) count, memory * Math.max(1, memoryFactor),
                    (int) cores));
        }

        /** HAMi's memreq on {@code device}: the request, or the whole device ({@code Totalmem × 100 / 100}). */
        long memoryOn(RegisteredDevice device) {
            return memoryMiB > 0 ? memoryMiB : device.devmem();
        }

        String describe() {
            return count + " × " + (memoryMiB > 0 ? memoryMiB + " MiB" : "whole device") + ", " + cores + " cores";
        }
    }

    /**
     * Places every container's request for {@code vendor} on {@code devices} (register order).
     *
     * @param inUse what pods already placed on the node hold, by device id (every vendor's devices)
     * @param containers one element per container (init containers first), empty where it asks for none of
     *     {@code vendor}'s devices
     * @param hamiCore Ascend's {@code hami-core} mode (pod annotation {@code huawei.com/vnpu-mode}): cores out of
     *     100 instead of the registered devcore; ignored for Hygon
     */
    static Placement place(NodeVendor vendor, List<RegisteredDevice> devices, Map<String, Usage> inUse,
            List<Optional<DeviceRequest>> containers, boolean hamiCore) {
        requireNonNull(vendor, "vendor");
        Map<String, Usage> usage = new HashMap<>(inUse);
        List<List<ContainerDevice>> chosen = new ArrayList<>();
        String word = vendor.commonWord().toLowerCase(Locale.ROOT);
        List<RegisteredDevice> typed = devices.stream()
                .filter(d -> d.type().toLowerCase(Locale.ROOT).contains(word)).toList();
        for (Optional<DeviceRequest> container : containers) {
            if (container.isEmpty()) {
                chosen.add(List.of());
                continue;
            }
            DeviceRequest request = container.get();
            String noun = vendor.displayName() + " device";
            if (request.count() > typed.size()) {
                return new Refused("no " + noun + " fits container " + request.container() + " (" + request.describe()
                        + "): " + typed.size() + " of type " + vendor.commonWord() + " registered, "
                        + request.count() + " requested");
            }
            int cores = Math.min(100, request.cores()); // HAMi clamps (and logs "core limit can't exceed 100")
            List<ContainerDevice> picked = new ArrayList<>();
            List<String> misfits = new ArrayList<>();
            for (RegisteredDevice device : typed) {
                if (picked.size() == request.count()) {
                    break;
                }
                Usage used = usage.getOrDefault(device.id(), Usage.NONE);
                String misfit = misfit(vendor, device, used, request, cores, hamiCore);
                if (misfit != null) {
                    misfits.add(shortId(device) + " " + misfit);
                    continue;
                }
                long memory = request.memoryOn(device);
                picked.add(new ContainerDevice(device.id(), vendor.commonWord(), memory, cores));
                usage.put(device.id(), used.plus(memory, cores));
            }
            if (picked.size() < request.count()) {
                String why = String.join("; ", misfits);
                if (!picked.isEmpty() || misfits.isEmpty()) {
                    why = "only " + picked.size() + " of " + request.count() + " fit" + (misfits.isEmpty() ? ""
                            : "; " + why);
                }
                return new Refused("no " + noun + " fits container " + request.container() + " (" + request.describe()
                        + "): " + why);
            }
            chosen.add(picked);
        }
        return new Fit(chosen);
    }

    /** Why {@code device} cannot take one device of {@code request}, in HAMi's order of checks; null when it fits. */
    private static String misfit(NodeVendor vendor, RegisteredDevice device, Usage used, DeviceRequest request,
            int cores, boolean hamiCore) {
        if (!device.health()) {
            return "unhealthy";
        }
        if (used.pods() >= device.count()) {
            return "shared by " + used.pods() + " of " + device.count() + " (split count)";
        }
        long memory = request.memoryOn(device);
        long freeMemory = device.devmem() - used.memoryMiB();
        if (freeMemory < memory) {
            return "memory: " + Math.max(0, freeMemory) + " of " + device.devmem() + " MiB free, " + memory
                    + " requested";
        }
        int totalCores = vendor.kind() == NodeVendor.Kind.ASCEND && hamiCore ? 100 : device.devcore();
        int freeCores = totalCores - used.cores();
        if (freeCores < cores) {
            return "cores: " + Math.max(0, freeCores) + " of " + totalCores + " free, " + cores + " requested";
        }
        if (totalCores == 100 && cores == 100 && used.pods() > 0) {
            return "exclusive use (100 of 100 cores) requested, shared by " + used.pods();
        }
        if (totalCores != 0 && used.cores() == totalCores && cores == 0) {
            return "cores fully allocated";
        }
        return null;
    }

    /** {@code #0 DCU-K100-0} — enough to tell a node's devices apart in one line of evidence. */
    static String shortId(RegisteredDevice device) {
        String id = device.id();
        return "#" + device.index() + " " + (id.length() > 12 ? id.substring(0, 12) : id);
    }
}
