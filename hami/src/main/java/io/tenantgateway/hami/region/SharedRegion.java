package io.tenantgateway.hami.region;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Reads HAMi-core's shared region: the {@code .cache} file that {@code libvgpu.so} creates in each container at its
 * first CUDA call and every process of the container keeps updating. On the host it lies under
 * {@code <hook path>/vgpu/containers/<podUID>_<container>/}. Two layouts are known ({@link RegionVersion}); the
 * file's size and {@code major_version} choose one, and anything else is rejected with a {@link RegionRejection}.
 *
 * <p>What counts: the process slots below {@code proc_num} (clamped to 0..1024) whose status is not 0; for each
 * device below {@code device_num} (at most 16) the sums of their memory and SM utilisation. Slots at or above
 * {@code proc_num} are never read.
 *
 * <p>Consistency: HAMi-core's processes write while the region is read. In v1 each slot carries a seqlock that a
 * writer makes odd before and even after it changes the slot; a slot's fields count only when they were read
 * between two reads of its seqlock that are equal and even. A slot is tried at most {@value #MAX_SLOT_READS} times;
 * one that never reads consistently makes the whole region {@link RegionRejection#TORN} (skip it, read it again
 * next time). v0 has no seqlock; its slots are read once. Header fields carry no lock and are only bounded.
 *
 * <p>Never writes: buffers are read through read-only views, files are opened for reading only. The region belongs
 * to the container and may hold anything: values that no HAMi-core writes are clamped and reported as
 * {@link RegionWarning}s, never trusted and never thrown. Stateless and safe from any thread.
 */
public final class SharedRegion {
    /** {@code initialized_flag}, the first four bytes of every region. */
    public static final int MAGIC = RegionLayout.MAGIC;
    /** The size of a v0 region; a file at least this long and shorter than {@link #V1_SIZE} is read as v0. */
    public static final int V0_SIZE = RegionLayout.V0_SIZE;
    /** The size of a v1 region; a file at least this long must have {@code major_version} 1. */
    public static final int V1_SIZE = RegionLayout.V1_SIZE;
    /** How many times a slot is read before the region counts as torn. */
    static final int MAX_SLOT_READS = 3;

    private SharedRegion() {
    }

    /**
     * Reads the region held in {@code region}'s bytes from its position to its limit. Neither the buffer's content
     * nor its position changes.
     *
     * <p>Not for a mapping of a container's file: the container may truncate it, and on JDK 17 a read of a mapped
     * page past the new end returns garbage and throws an {@link InternalError} later, wherever the thread then is.
     * Read files with {@link #read(Path)} or {@link #read(FileChannel)}.
     */
    public static RegionRead read(ByteBuffer region) {
        return read(RegionBytes.of(requireNonNull(region, "region")));
    }

    /**
     * Reads a region file ({@link #read(FileChannel)}). Refuses a symbolic link and anything but a regular file: the
     * directory is the container's to fill. A file swapped for a FIFO between the check and the open would block
     * the open, so call this from a thread that may block, never from an event loop.
     *
     * @throws IOException when the file cannot be opened or read, or is not a regular file
     */
    public static RegionRead read(Path file) throws IOException {
        requireNonNull(file, "file");
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new FileSystemException(file.toString(), null, "not a regular file (expected: a region file)");
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            return read(channel);
        }
    }

    /**
     * Reads the region file open on {@code channel} with positional reads (the channel's position does not move):
     * the header, the fields after the slots, and the slots below {@code proc_num}, a few KiB for a few processes. A
     * file that shrinks meanwhile is {@link RegionRejection#TRUNCATED}. The channel may be kept open and read again
     * on every scrape.
     *
     * @throws IOException when reading fails
     */
    public static RegionRead read(FileChannel channel) throws IOException {
        return ChannelRegion.read(ChannelRegion.Source.of(requireNonNull(channel, "channel")));
    }

    static RegionRead read(RegionBytes bytes) {
        Choice choice = choose(bytes.size(), bytes);
        if (choice.rejection() != null) {
            return choice.rejection();
        }
        RegionLayout layout = choice.layout();
        return parse(bytes, layout, (index, slots, sums) -> readSlot(bytes, layout, index, sums));
    }

    /** The layout to read, or why none: a layout, or a rejection. */
    record Choice(RegionLayout layout, RegionRead rejection) {
    }

    /**
     * Chooses the layout of a region of {@code size} bytes from its size and first 12 bytes ({@code head}).
     */
    static Choice choose(int size, RegionBytes head) {
        if (size < Integer.BYTES) {
            return new Choice(null, truncated(size));
        }
        int magic = head.getInt(0);
        if (magic != MAGIC) {
            return new Choice(null, RegionRead.rejected(RegionRejection.WRONG_MAGIC,
                    "magic " + magic + " (expected: " + MAGIC + ")"));
        }
        if (size < V0_SIZE) {
            return new Choice(null, truncated(size));
        }
        if (size < V1_SIZE) {
            // HAMi's rule: the size alone says v0, whatever lies where v1 keeps its version (v0's sm_init_flag).
            return new Choice(RegionLayout.V0, null);
        }
        int major = head.getInt(4);
        if (major != 1) {
            return new Choice(null, RegionRead.rejected(RegionRejection.UNSUPPORTED_VERSION, "version "
                    + Integer.toUnsignedString(major) + "." + Integer.toUnsignedString(head.getInt(8))
                    + " (expected: 1.x)"));
        }
        return new Choice(RegionLayout.V1, null);
    }

    private static RegionRead truncated(int size) {
        return RegionRead.rejected(RegionRejection.TRUNCATED, size + " bytes (expected: at least " + V0_SIZE
                + " for v0, " + V1_SIZE + " for v1)");
    }

    /** Reads one slot consistently into {@code sums}. */
    interface SlotReader {
        /**
         * Adds slot {@code index} (of {@code slots}, the clamped {@code proc_num}) to {@code sums}; false when it
         * never read consistently.
         */
        boolean read(int index, int slots, ProcessSums sums);
    }

    /** Reads the header fields from {@code header} and the slots through {@code slotReader}. */
    static RegionRead parse(RegionBytes header, RegionLayout layout, SlotReader slotReader) {
        Set<RegionWarning> warnings = EnumSet.noneOf(RegionWarning.class);
        int deviceCount = deviceCount(header.getLong(layout.deviceNum()), warnings);
        int procNum = procNum(header.getInt(layout.procNum()), warnings);
        ProcessSums sums = new ProcessSums(deviceCount, warnings);
        for (int index = 0; index < procNum; index++) {
            if (!slotReader.read(index, procNum, sums)) {
                return RegionRead.rejected(RegionRejection.TORN, "process slot " + index + ": seqlock odd or changing"
                        + " over " + MAX_SLOT_READS + " reads (expected: even and unchanged)");
            }
        }
        List<DeviceUsage> devices = new ArrayList<>(deviceCount);
        for (int i = 0; i < deviceCount; i++) {
            devices.add(new DeviceUsage(i,
                    uuid(header, layout.uuids() + i * RegionLayout.UUID_BYTES, warnings),
                    sums.unsigned(header.getLong(layout.limit() + i * Long.BYTES)),
                    sums.unsigned(header.getLong(layout.smLimit() + i * Long.BYTES)),
                    sums.sum(ProcessSums.TOTAL, i), sums.sum(ProcessSums.CONTEXT, i),
                    sums.sum(ProcessSums.MODULE, i), sums.sum(ProcessSums.DATA, i),
                    sums.sum(ProcessSums.SM_UTIL, i)));
        }
        long lastKernelTime = layout.lastKernelTime() < 0 ? 0 : Math.max(0, header.getLong(layout.lastKernelTime()));
        return RegionRead.ok(new RegionSnapshot(layout.version(), devices, procNum, sums.liveSlots(), lastKernelTime,
                header.getInt(layout.priority()), header.getInt(layout.utilizationSwitch()),
                header.getInt(layout.recentKernel()), warnings));
    }

    /** Reads one slot of a buffer into {@code sums}; false when its seqlock never showed a consistent read. */
    private static boolean readSlot(RegionBytes bytes, RegionLayout layout, int index, ProcessSums sums) {
        if (!layout.hasSeqlock()) {
            sums.stage(bytes, layout, index);
            sums.commit();
            return true;
        }
        int seqlock = layout.slot(index) + layout.slotSeqlock();
        for (int attempt = 0; attempt < MAX_SLOT_READS; attempt++) {
            long before = bytes.getLong(seqlock);
            if ((before & 1) == 0) {
                VarHandle.acquireFence(); // the slot's loads stay after the first seqlock load...
                sums.stage(bytes, layout, index);
                VarHandle.acquireFence(); // ...and before the second
                if (bytes.getLong(seqlock) == before) {
                    sums.commit();
                    return true;
                }
            }
            Thread.onSpinWait();
        }
        return false;
    }

    private static int deviceCount(long deviceNum, Set<RegionWarning> warnings) {
        if (Long.compareUnsigned(deviceNum, RegionLayout.MAX_DEVICES) > 0) {
            warnings.add(RegionWarning.DEVICE_NUM_CLAMPED);
            return RegionLayout.MAX_DEVICES;
        }
        return (int) deviceNum;
    }

    private static int procNum(int procNum, Set<RegionWarning> warnings) {
        if (procNum < 0 || procNum > RegionLayout.MAX_PROCESSES) {
            warnings.add(RegionWarning.PROC_NUM_CLAMPED);
            return procNum < 0 ? 0 : RegionLayout.MAX_PROCESSES;
        }
        return procNum;
    }

    /**
     * The NUL-terminated UUID at {@code offset}: printable ASCII kept, every other byte and {@code \} escaped as
     * {@code \xNN}, so that a forged file cannot put control characters into a metric label.
     */
    private static String uuid(RegionBytes bytes, int offset, Set<RegionWarning> warnings) {
        StringBuilder uuid = new StringBuilder(48);
        for (int i = 0; i < RegionLayout.UUID_BYTES; i++) {
            int b = bytes.get(offset + i) & 0xff;
            if (b == 0) {
                return uuid.toString();
            }
            if (b >= 0x20 && b <= 0x7e && b != '\\') {
                uuid.append((char) b);
            } else {
                warnings.add(RegionWarning.UUID_ESCAPED);
                uuid.append("\\x").append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xf, 16));
            }
        }
        warnings.add(RegionWarning.UUID_UNTERMINATED);
        return uuid.toString();
    }
}
