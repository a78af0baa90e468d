package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

/**
 * The IDs HAMi's NVIDIA device plugin lists to kubelet: each GPU is split into {@code deviceSplitCount} virtual
 * devices {@code <UUID>-<i>}, i = 0…count−1. Kubelet hands these IDs back in Allocate; HAMi's allocation itself
 * uses the GPU UUIDs of the pod's annotation, so the virtual ID only says which physical GPU a replica belongs to.
 */
public final class VirtualDeviceIds {
    /** Kubelet's limit on a device ID. */
    public static final int MAX_LENGTH = 63;

    private VirtualDeviceIds() {
    }

    /**
     * {@code <uuid>-<index>}.
     *
     * @throws IllegalArgumentException when the ID would be longer than kubelet accepts, or the index is negative
     */
    public static String of(String uuid, int index) {
        requireNonNull(uuid, "uuid");
        if (index < 0) {
            throw new IllegalArgumentException("index: " + index + " (expected: >= 0)");
        }
        String id = uuid + "-" + index;
        if (id.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("virtual device ID " + id + ": " + id.length()
                    + " characters (expected: at most " + MAX_LENGTH + ", kubelet's limit)");
        }
        return id;
    }

    /**
     * The GPU UUID of a virtual device ID: the text before the last {@code -<digits>} when the ID has one more dash
     * than an NVIDIA UUID ({@code GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx} has five, as HAMi counts); otherwise the
     * ID itself (a whole GPU).
     */
    public static String physicalId(String id) {
        requireNonNull(id, "id");
        long dashes = id.chars().filter(c -> c == '-').count();
        int last = id.lastIndexOf('-');
        if (dashes == 6 && last > 0 && last < id.length() - 1
                && id.substring(last + 1).chars().allMatch(c -> c >= '0' && c <= '9')) {
            return id.substring(0, last);
        }
        return id;
    }
}
