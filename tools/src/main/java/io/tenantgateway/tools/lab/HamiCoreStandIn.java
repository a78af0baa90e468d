package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.tenantgateway.deviceplugin.v1beta1.Mount;
import io.tenantgateway.hami.HamiCore;
import io.tenantgateway.hami.region.SimulatedRegion;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HAMi-core ({@code libvgpu.so}) inside one simulated GPU container of the lab, where no GPU and no library exist:
 * at the container's first CUDA call it creates the shared region named by {@code CUDA_DEVICE_MEMORY_SHARED_CACHE},
 * with the limits of its environment, and on every later call it writes its usage again. Kubelet's Allocate answer is
 * the container's whole world: the environment gives the file's name inside the container and the limits, the mounts
 * give where that file is on the host ({@code /usr/local/vgpu} ←
 * {@code /usr/local/vgpu/containers/<podUID>_<container>}), seen from the worker's host root. The region is
 * written in the real v1 layout ({@link SimulatedRegion}), so the agent's vGPU monitor reads it as it reads
 * HAMi-core's.
 *
 * <p>The usage changes with every write, so a reader can tell one write from the next: write {@code n} holds
 * {@code n mod 4} quarters of each device's memory limit (4 quarters on the fourth) and half or all of its SM limit
 * (of 100 % without one). Not thread-safe: the lab's thread drives it.
 */
final class HamiCoreStandIn {
    /** HAMi-core's memory limit for every device without a {@code CUDA_DEVICE_MEMORY_LIMIT_<i>} of its own. */
    private static final String MEMORY_LIMIT_ALL = "CUDA_DEVICE_MEMORY_LIMIT";

    private final String containerFile;
    private final Path hostFile;
    private final List<Limit> limits;
    private final int pid;
    private int writes;

    /** One device of the container as its environment limits it. */
    record Limit(String uuid, long memoryBytes, long smPercent) {
    }

    /** What one write put into the region. */
    record Written(int write, Path file, List<SimulatedRegion.Device> devices, long lastKernelTime) {
        /** The first device's usage, in MiB. */
        long usedMiB() {
            return devices.get(0).usedBytes() >> 20;
        }

        /** The first device's SM use, percent. */
        long smUtil() {
            return devices.get(0).smUtil();
        }
    }

    private HamiCoreStandIn(String containerFile, Path hostFile, List<Limit> limits, int pid) {
        this.containerFile = containerFile;
        this.hostFile = hostFile;
        this.limits = List.copyOf(limits);
        this.pid = pid;
    }

    /**
     * The container Allocate answered {@code answer} for, on a worker whose host file system is at {@code hostRoot};
     * nothing is written yet.
     *
     * @param pid the process id the region records for the container's one process
     * @throws IllegalArgumentException when the answer gives no region file, no mount holding it, or no device
     */
    static HamiCoreStandIn of(ContainerAllocateResponse answer, Path hostRoot, int pid) {
        requireNonNull(answer, "answer");
        requireNonNull(hostRoot, "hostRoot");
        Map<String, String> env = answer.getEnvsMap();
        String cache = env.get(HamiCore.ENV_MEMORY_SHARED_CACHE);
        if (cache == null || !cache.startsWith("/")) {
            throw new IllegalArgumentException(HamiCore.ENV_MEMORY_SHARED_CACHE + ": " + cache
                    + " (expected: an absolute path in the container)");
        }
        // The container cannot leave its own file system: ".." stops at its root.
        cache = Path.of(cache).normalize().toString();
        // The mount whose container path holds the file, the deepest when several do.
        Mount holding = null;
        for (Mount mount : answer.getMountsList()) {
            String inside = mount.getContainerPath();
            if (cache.startsWith(inside.endsWith("/") ? inside : inside + "/")
                    && (holding == null || inside.length() > holding.getContainerPath().length())) {
                holding = mount;
            }
        }
        if (holding == null) {
            throw new IllegalArgumentException(HamiCore.ENV_MEMORY_SHARED_CACHE + "=" + cache + " is in no mount of"
                    + " the Allocate answer (mounts: " + answer.getMountsList().stream().map(Mount::getContainerPath)
                    .toList() + ")");
        }
        Path root = hostRoot.toAbsolutePath().normalize();
        String rest = cache.substring(holding.getContainerPath().length()).replaceFirst("^/+", "");
        Path file = root.resolve(holding.getHostPath().replaceFirst("^/+", "")).resolve(rest).normalize();
        if (!file.startsWith(root) || file.equals(root)) {
            throw new IllegalArgumentException(HamiCore.ENV_MEMORY_SHARED_CACHE + "=" + cache + " leaves the host"
                    + " root through mount " + holding.getHostPath());
        }
        String visible = env.getOrDefault(HamiCore.ENV_VISIBLE_DEVICES, "");
        List<Limit> limits = new ArrayList<>();
        for (String uuid : visible.split(",")) {
            if (uuid.isBlank()) {
                continue;
            }
            int i = limits.size();
            String memory = env.getOrDefault(HamiCore.ENV_MEMORY_LIMIT_PREFIX + i, env.get(MEMORY_LIMIT_ALL));
            String sm = env.getOrDefault(HamiCore.ENV_SM_LIMIT + "_" + i, env.get(HamiCore.ENV_SM_LIMIT));
            limits.add(new Limit(uuid.strip(), memoryBytes(memory), sm == null ? 0 : Long.parseLong(sm.strip())));
        }
        if (limits.isEmpty()) {
            throw new IllegalArgumentException(HamiCore.ENV_VISIBLE_DEVICES + ": \"" + visible
                    + "\" (expected: the container's device UUIDs)");
        }
        return new HamiCoreStandIn(cache, file, limits, pid);
    }

    /**
     * HAMi-core's memory limit text, as {@code libvgpu.so} reads it: a number of bytes, or with a {@code k}, {@code m}
     * or {@code g} suffix (either case) of KiB, MiB or GiB; none: no limit (0).
     */
    static long memoryBytes(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        String value = text.strip().toLowerCase(Locale.ROOT);
        int shift = switch (value.charAt(value.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        long number = Long.parseLong(shift == 0 ? value : value.substring(0, value.length() - 1));
        return number << shift;
    }

    /** The region file's name inside the container ({@code CUDA_DEVICE_MEMORY_SHARED_CACHE}). */
    String containerFile() {
        return containerFile;
    }

    /** The region file on the host, as the agent sees it. */
    Path hostFile() {
        return hostFile;
    }

    List<Limit> limits() {
        return limits;
    }

    /**
     * A CUDA call of the container: the first creates the region, each writes the usage of the next step (see the
     * class comment) with its last kernel launch now.
     */
    Written cudaCall(Clock clock) throws IOException {
        int write = ++writes;
        long quarters = (write - 1) % 4 + 1;
        long halves = (write - 1) % 2 + 1;
        List<SimulatedRegion.Device> devices = new ArrayList<>();
        for (Limit limit : limits) {
            long sm = limit.smPercent() > 0 ? limit.smPercent() : 100;
            devices.add(new SimulatedRegion.Device(limit.uuid(), limit.memoryBytes(), limit.smPercent(),
                    limit.memoryBytes() / 4 * quarters, sm * halves / 2));
        }
        long lastKernel = clock.instant().getEpochSecond();
        SimulatedRegion.write(hostFile, pid, devices, lastKernel);
        return new Written(write, hostFile, devices, lastKernel);
    }
}
