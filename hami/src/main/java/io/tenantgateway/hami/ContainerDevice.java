package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

/**
 * One device handed to one container, as HAMi encodes it in the pod's device annotations:
 * {@code <UUID>,<type>,<memMiB>,<cores>}.
 *
 * @param uuid the GPU UUID (e.g. {@code GPU-24aa…})
 * @param type the vendor type word ({@code NVIDIA})
 * @param memoryMiB device memory given to the container, in MiB
 * @param cores percent of the device's compute given to the container
 */
public record ContainerDevice(String uuid, String type, long memoryMiB, int cores) {
    public ContainerDevice {
        requireNonNull(uuid, "uuid");
        requireNonNull(type, "type");
        if (uuid.isEmpty() || uuid.contains(",") || uuid.contains(":") || uuid.contains(";")) {
            throw new IllegalArgumentException("uuid: " + GoStrconv.quoteAbbreviated(uuid, 200)
                    + " (expected: non-empty, without , : ;)");
        }
        if (type.isEmpty() || type.contains(",") || type.contains(":") || type.contains(";")) {
            throw new IllegalArgumentException("type: " + GoStrconv.quoteAbbreviated(type, 200)
                    + " (expected: non-empty, without , : ;)");
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("memoryMiB: " + memoryMiB + " (expected: >= 0)");
        }
        if (cores < 0) {
            throw new IllegalArgumentException("cores: " + cores + " (expected: >= 0)");
        }
    }

    /** An NVIDIA device entry, the only vendor this agent completes allocations for. */
    public static ContainerDevice nvidia(String uuid, long memoryMiB, int cores) {
        return new ContainerDevice(uuid, "NVIDIA", memoryMiB, cores);
    }
}
