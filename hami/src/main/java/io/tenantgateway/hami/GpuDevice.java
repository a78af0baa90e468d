package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

/**
 * One GPU as HAMi's scheduler sees it: one element of the {@code hami.io/node-nvidia-register}
 * annotation. Field names follow HAMi's {@code DeviceInfo} JSON keys.
 *
 * @param id         GPU UUID ({@code GPU-…}); HAMi's {@code id}
 * @param index      device index on the node; HAMi's {@code index}
 * @param count      split count: how many pods may share this GPU; HAMi's {@code count}
 * @param devmemMiB  device memory in MiB; HAMi's {@code devmem}
 * @param devcore    compute share, 100 = the whole GPU; HAMi's {@code devcore}
 * @param type       model name; must contain {@code NVIDIA} for the scheduler's filter
 * @param numa       NUMA node of the GPU's PCI device
 * @param mode       {@code hami-core}, {@code mig} or {@code mps}; empty when unknown
 * @param healthy    HAMi's {@code health}; omitted in JSON means unhealthy
 */
public record GpuDevice(String id, int index, int count, int devmemMiB, int devcore, String type,
                        int numa, String mode, boolean healthy) {

    /** HAMi's default operating mode: memory and core limits enforced by HAMi-core. */
    public static final String MODE_HAMI_CORE = "hami-core";

    public GpuDevice {
        requireNonNull(id, "id");
        requireNonNull(type, "type");
        requireNonNull(mode, "mode");
        requireNonNegative("index", index, id);
        requireNonNegative("count", count, id);
        requireNonNegative("devmem", devmemMiB, id);
        requireNonNegative("devcore", devcore, id);
        requireNonNegative("numa", numa, id);
    }

    private static void requireNonNegative(String field, int value, String id) {
        if (value < 0) {
            throw new IllegalArgumentException(
                    "device " + id + ": " + field + ": " + value + " (expected: >= 0)");
        }
    }

    /**
     * The type name HAMi's device plugin would register for a model name reported by the driver:
     * names that do not start with {@code NVIDIA} get the {@code NVIDIA-} prefix, so that the
     * scheduler's {@code NVIDIA} filter matches every device we register.
     */
    public static String typeForModel(String modelName) {
        requireNonNull(modelName, "modelName");
        return modelName.startsWith("NVIDIA") ? modelName : "NVIDIA-" + modelName;
    }
}
