package io.tenantgateway.hami.region;

import static java.util.Objects.requireNonNull;

/**
 * One device of a region: what HAMi-core limits it to, and the sums over the region's live process slots. On disk
 * every amount is an unsigned 64-bit number; here each is saturated at {@link Long#MAX_VALUE}
 * ({@link RegionWarning#VALUE_SATURATED}), so none is negative.
 *
 * @param index the device's index in the region (HAMi's {@code vdevice_index} label)
 * @param uuid the UUID as HAMi-core wrote it, up to its NUL, bytes outside printable ASCII (and {@code \}) escaped
 *        as {@code \xNN}; empty when HAMi-core has not written it yet (HAMi's monitor skips such a device)
 * @param limitBytes {@code limit[i]}, bytes
 * @param smLimitPercent {@code sm_limit[i]}, percent of the device's SMs
 * @param usedBytes Σ {@code used[i].total}: device memory in use ({@code hami_vgpu_memory_used_bytes})
 * @param contextBytes Σ {@code used[i].context_size}
 * @param moduleBytes Σ {@code used[i].module_size}
 * @param dataBytes Σ {@code used[i].data_size} (HAMi's "buffer" bytes)
 * @param smUtilSum Σ {@code device_util[i].sm_util}: percent points summed over the processes, as HAMi exports it
 */
public record DeviceUsage(int index, String uuid, long limitBytes, long smLimitPercent, long usedBytes,
        long contextBytes, long moduleBytes, long dataBytes, long smUtilSum) {
    /** HAMi cuts UUIDs to this many characters for its {@code device_uuid} label. */
    public static final int UUID_LABEL_CHARS = 40;

    public DeviceUsage {
        requireNonNull(uuid, "uuid");
        if (index < 0 || index >= RegionLayout.MAX_DEVICES) {
            throw new IllegalArgumentException("index: " + index + " (expected: 0.." + (RegionLayout.MAX_DEVICES - 1)
                    + ")");
        }
        if ((limitBytes | smLimitPercent | usedBytes | contextBytes | moduleBytes | dataBytes | smUtilSum) < 0) {
            throw new IllegalArgumentException("device " + index + ": a negative amount (expected: all >= 0)");
        }
    }

    /** The UUID as HAMi labels metrics with it: its first 40 characters. */
    public String uuidLabel() {
        return uuid.length() <= UUID_LABEL_CHARS ? uuid : uuid.substring(0, UUID_LABEL_CHARS);
    }
}
