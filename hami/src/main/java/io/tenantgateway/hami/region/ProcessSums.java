package io.tenantgateway.hami.region;

import java.util.Set;

/**
 * Per-device sums over a region's live process slots. One slot's values are staged first and added only once the
 * slot's read proved consistent, so a torn read never reaches the sums. Amounts are unsigned on disk and saturate at
 * {@link Long#MAX_VALUE}. Not thread-safe: one per read.
 */
final class ProcessSums {
    static final int CONTEXT = 0;
    static final int MODULE = 1;
    static final int DATA = 2;
    static final int TOTAL = 3;
    static final int SM_UTIL = 4;
    private static final int FIELDS = 5;

    private final int devices;
    private final Set<RegionWarning> warnings;
    private final long[] sums;
    private final long[] staged;
    private boolean stagedLive;
    private int liveSlots;

    ProcessSums(int devices, Set<RegionWarning> warnings) {
        this.devices = devices;
        this.warnings = warnings;
        this.sums = new long[FIELDS * devices];
        this.staged = new long[FIELDS * devices];
    }

    /** Reads slot {@code index}'s status and, for a live slot, its per-device amounts into the stage. */
    void stage(RegionBytes bytes, RegionLayout layout, int index) {
        int slot = layout.slot(index);
        stagedLive = bytes.getInt(slot + layout.slotStatus()) != 0;
        if (!stagedLive) {
            return;
        }
        for (int device = 0; device < devices; device++) {
            int used = slot + layout.slotUsed() + device * layout.memoryEntry();
            staged[CONTEXT * devices + device] = bytes.getLong(used + RegionLayout.MEMORY_CONTEXT);
            staged[MODULE * devices + device] = bytes.getLong(used + RegionLayout.MEMORY_MODULE);
            staged[DATA * devices + device] = bytes.getLong(used + RegionLayout.MEMORY_DATA);
            staged[TOTAL * devices + device] = bytes.getLong(used + RegionLayout.MEMORY_TOTAL);
            int util = slot + layout.slotDeviceUtil() + device * layout.utilEntry();
            staged[SM_UTIL * devices + device] = bytes.getLong(util + RegionLayout.UTIL_SM);
        }
    }

    /** Adds the staged slot to the sums, if it was live. */
    void commit() {
        if (!stagedLive) {
            return;
        }
        liveSlots++;
        for (int i = 0; i < sums.length; i++) {
            sums[i] = add(sums[i], unsigned(staged[i]));
        }
    }

    long sum(int field, int device) {
        return sums[field * devices + device];
    }

    int liveSlots() {
        return liveSlots;
    }

    /** An unsigned 64-bit value, saturated at {@link Long#MAX_VALUE}. */
    long unsigned(long value) {
        if (value < 0) {
            warnings.add(RegionWarning.VALUE_SATURATED);
            return Long.MAX_VALUE;
        }
        return value;
    }

    private long add(long sum, long value) {
        long result = sum + value;
        if (result < 0) {
            warnings.add(RegionWarning.VALUE_SATURATED);
            return Long.MAX_VALUE;
        }
        return result;
    }
}
