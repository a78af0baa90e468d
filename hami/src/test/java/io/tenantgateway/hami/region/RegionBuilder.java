package io.tenantgateway.hami.region;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Builds a region byte by byte. The offsets here are HAMi-core's numbers written out, not the production constants,
 * so that a test reading a built region checks the reader's arithmetic against them.
 */
final class RegionBuilder {
    private final boolean v1;
    private final ByteBuffer bytes;
    private final int procs;
    private final int slotSize;
    private final int used;
    private final int memoryEntry;
    private final int deviceUtil;
    private final int utilEntry;
    private final int status;
    private final int procNum;

    private RegionBuilder(boolean v1, int size) {
        this.v1 = v1;
        this.bytes = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        this.procs = v1 ? 1856 : 1848;
        this.slotSize = v1 ? 1960 : 1168;
        this.used = 8;
        this.memoryEntry = v1 ? 64 : 40;
        this.deviceUtil = v1 ? 1160 : 776;
        this.utilEntry = v1 ? 48 : 24;
        this.status = v1 ? 1928 : 1160;
        this.procNum = v1 ? 2008896 : 1197880;
        putInt(0, 19920718);
        if (v1) {
            putInt(4, 1);
            putInt(8, 2);
        }
    }

    /** A HAMi-core v1.2 region: 2008952 bytes, version 1.2. */
    static RegionBuilder v1() {
        return new RegionBuilder(true, 2008952);
    }

    /** A v0 region as HAMi-core of that time sized the file: the struct's 1197896 bytes and one more. */
    static RegionBuilder v0() {
        return new RegionBuilder(false, 1197897);
    }

    RegionBuilder deviceNum(long n) {
        return putLong(v1 ? 56 : 48, n);
    }

    RegionBuilder uuid(int device, String uuid) {
        return uuidBytes(device, uuid.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Writes {@code raw} at the device's 96-byte UUID field, NUL-terminated only if it is shorter. */
    RegionBuilder uuidBytes(int device, byte[] raw) {
        int offset = (v1 ? 64 : 56) + device * 96;
        byte[] field = Arrays.copyOf(raw, 96);
        bytes.put(offset, field, 0, 96);
        return this;
    }

    RegionBuilder limit(int device, long bytesLimit) {
        return putLong((v1 ? 1600 : 1592) + device * 8, bytesLimit);
    }

    RegionBuilder smLimit(int device, long percent) {
        return putLong((v1 ? 1728 : 1720) + device * 8, percent);
    }

    RegionBuilder procNum(int n) {
        return putInt(procNum, n);
    }

    RegionBuilder utilizationSwitch(int value) {
        return putInt(procNum + 4, value);
    }

    RegionBuilder recentKernel(int value) {
        return putInt(procNum + 8, value);
    }

    RegionBuilder priority(int value) {
        return putInt(procNum + 12, value);
    }

    RegionBuilder lastKernelTime(long seconds) {
        requireV1();
        return putLong(2008912, seconds);
    }

    /** Sets a slot's pid, host pid and status. */
    RegionBuilder process(int slot, int pid, int hostPid, int slotStatus) {
        putInt(slotOffset(slot), pid);
        putInt(slotOffset(slot) + 4, hostPid);
        return putInt(slotOffset(slot) + status, slotStatus);
    }

    /** Sets a slot's {@code used[device]}: context, module, data, offset (a distinct marker) and total. */
    RegionBuilder used(int slot, int device, long context, long module, long data, long total) {
        int entry = slotOffset(slot) + used + device * memoryEntry;
        putLong(entry, context);
        putLong(entry + 8, module);
        putLong(entry + 16, data);
        putLong(entry + 24, 0x0ff5e7L); // offset: never summed
        putLong(entry + 32, total);
        if (v1) {
            putLong(entry + 40, -1L); // unused[0..2]: never read
            putLong(entry + 48, -1L);
            putLong(entry + 56, -1L);
        }
        return this;
    }

    /** Sets a slot's {@code device_util[device]}; dec and enc get markers that must not be summed. */
    RegionBuilder smUtil(int slot, int device, long smUtil) {
        int entry = slotOffset(slot) + deviceUtil + device * utilEntry;
        putLong(entry, 77);
        putLong(entry + 8, 88);
        putLong(entry + 16, smUtil);
        return this;
    }

    /** Sets a slot's {@code monitorused[device]} (never summed). */
    RegionBuilder monitorUsed(int slot, int device, long value) {
        int offset = slotOffset(slot) + used + 16 * memoryEntry + device * 8;
        return putLong(offset, value);
    }

    RegionBuilder seqlock(int slot, long value) {
        return putLong(seqlockOffset(slot), value);
    }

    int seqlockOffset(int slot) {
        requireV1();
        return slotOffset(slot) + 1936;
    }

    int totalOffset(int slot, int device) {
        return slotOffset(slot) + used + device * memoryEntry + 32;
    }

    int slotOffset(int slot) {
        return procs + slot * slotSize;
    }

    RegionBuilder putInt(int offset, int value) {
        bytes.putInt(offset, value);
        return this;
    }

    RegionBuilder putLong(int offset, long value) {
        bytes.putLong(offset, value);
        return this;
    }

    /** A copy of the region, {@code size} bytes long (cut, or padded with zeros). */
    ByteBuffer build(int size) {
        byte[] copy = Arrays.copyOf(bytes.array(), size);
        return ByteBuffer.wrap(copy);
    }

    ByteBuffer build() {
        return build(bytes.capacity());
    }

    private void requireV1() {
        if (!v1) {
            throw new IllegalStateException("a v1 field (expected: a v1 region)");
        }
    }
}
