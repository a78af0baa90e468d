package io.tenantgateway.hami.region;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Regions built byte by byte ({@link RegionBuilder}): what counts, what is rejected, what is bounded. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedRegionTest {
    private static final String GPU_0 = "GPU-8f3c2a51-0d4e-4b7a-9c1e-2f6d7a8b9c0d";
    private static final String GPU_1 = "GPU-1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
    private static final long GIB = 1L << 30;

    /** Two devices, four slots: 0 running, 1 free (status 0), 2 suspended, 3 running but at proc_num. */
    private static RegionBuilder twoDevicesThreeProcesses(RegionBuilder region) {
        region.deviceNum(2).uuid(0, GPU_0).uuid(1, GPU_1)
                .limit(0, 8 * GIB).limit(1, 4 * GIB).smLimit(0, 30).smLimit(1, 50)
                .procNum(3).priority(1).utilizationSwitch(1).recentKernel(-1)
                .process(0, 101, 40101, 1).used(0, 0, 300, 20, 1000, 1320).used(0, 1, 1, 2, 3, 6)
                .smUtil(0, 0, 25).smUtil(0, 1, 5).monitorUsed(0, 0, 999_999)
                .process(1, 102, 40102, 0).used(1, 0, 7000, 7000, 7000, 70_000).smUtil(1, 0, 70)
                .process(2, 103, 40103, 2).used(2, 0, 400, 30, 2000, 2430).used(2, 1, 10, 20, 30, 60)
                .smUtil(2, 0, 15).smUtil(2, 1, 40)
                .used(2, 2, 5, 5, 5, 5000).smUtil(2, 2, 99) // device 2 is beyond device_num
                .process(3, 104, 40104, 1).used(3, 0, 9000, 9000, 9000, 90_000).smUtil(3, 0, 90);
        return region;
    }

    @Test
    void v1SumsLiveSlotsBelowProcNumPerDevice() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1())
                .seqlock(0, 4).seqlock(1, 0).seqlock(2, 18).lastKernelTime(1_750_000_000L);

        RegionRead read = SharedRegion.read(builder.build());

        assertThat(read.isOk()).isTrue();
        assertThat(read.rejection()).isNull();
        assertThat(read.detail()).isNull();
        RegionSnapshot snapshot = read.snapshot();
        assertThat(snapshot.version()).isEqualTo(RegionVersion.V1);
        assertThat(snapshot.deviceCount()).isEqualTo(2);
        assertThat(snapshot.devices()).containsExactly(
                new DeviceUsage(0, GPU_0, 8 * GIB, 30, 1320 + 2430, 300 + 400, 20 + 30, 1000 + 2000, 25 + 15),
                new DeviceUsage(1, GPU_1, 4 * GIB, 50, 6 + 60, 1 + 10, 2 + 20, 3 + 30, 5 + 40));
        assertThat(snapshot.procNum()).isEqualTo(3);
        assertThat(snapshot.liveProcesses()).isEqualTo(2);
        assertThat(snapshot.lastKernelTime()).isEqualTo(1_750_000_000L);
        assertThat(snapshot.hasLastKernel()).isTrue();
        assertThat(snapshot.priority()).isEqualTo(1);
        assertThat(snapshot.utilizationSwitch()).isEqualTo(1);
        assertThat(snapshot.recentKernel()).isEqualTo(-1);
        assertThat(snapshot.warnings()).isEmpty();
        assertThat(snapshot.devices().get(0).uuidLabel()).isEqualTo(GPU_0).hasSize(40);
    }

    @Test
    void v0SumsTheSameWayFromItsOwnOffsets() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v0());

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.version()).isEqualTo(RegionVersion.V0);
        assertThat(snapshot.devices()).containsExactly(
                new DeviceUsage(0, GPU_0, 8 * GIB, 30, 3750, 700, 50, 3000, 40),
                new DeviceUsage(1, GPU_1, 4 * GIB, 50, 66, 11, 22, 33, 45));
        assertThat(snapshot.procNum()).isEqualTo(3);
        assertThat(snapshot.liveProcesses()).isEqualTo(2);
        assertThat(snapshot.lastKernelTime()).isZero();
        assertThat(snapshot.hasLastKernel()).isFalse();
        assertThat(snapshot.priority()).isEqualTo(1);
        assertThat(snapshot.utilizationSwitch()).isEqualTo(1);
        assertThat(snapshot.recentKernel()).isEqualTo(-1);
        assertThat(snapshot.warnings()).isEmpty();
    }

    @Test
    void sizeAloneChoosesV0WhateverLiesWhereV1KeepsItsVersion() {
        // v0's sm_init_flag (@4) and owner_pid (@8) can read as "1.2"; a v0-sized file is still v0.
        RegionBuilder builder = RegionBuilder.v0().putInt(4, 1).putInt(8, 2).deviceNum(1).limit(0, GIB).procNum(1)
                .process(0, 1, 1, 1).used(0, 0, 1, 2, 3, 6);

        for (int size : new int[] {1197896, 1197897, 2008951}) {
            RegionSnapshot snapshot = SharedRegion.read(builder.build(size)).snapshot();
            assertThat(snapshot.version()).as("size %d", size).isEqualTo(RegionVersion.V0);
            assertThat(snapshot.devices()).containsExactly(new DeviceUsage(0, "", GIB, 0, 6, 1, 2, 3, 0));
        }
    }

    @Test
    void aV1FileMayBeLongerThanTheStruct() {
        // HAMi-core of some versions sized the file by writing one byte past the struct.
        RegionBuilder builder = RegionBuilder.v1().deviceNum(1).procNum(1).process(0, 1, 1, 1).used(0, 0, 0, 0, 0, 5);

        RegionSnapshot snapshot = SharedRegion.read(builder.build(2008953)).snapshot();

        assertThat(snapshot.version()).isEqualTo(RegionVersion.V1);
        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(5);
    }

    @Test
    void anOddSeqlockBelowProcNumTearsTheRegion() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1()).seqlock(2, 7);

        RegionRead read = SharedRegion.read(builder.build());

        assertThat(read.isOk()).isFalse();
        assertThat(read.snapshot()).isNull();
        assertThat(read.rejection()).isEqualTo(RegionRejection.TORN);
        assertThat(read.detail()).isEqualTo(
                "process slot 2: seqlock odd or changing over 3 reads (expected: even and unchanged)");
    }

    @Test
    void aFreeSlotBelowProcNumIsStillCheckedButSlotsAtProcNumAreNot() {
        assertThat(SharedRegion.read(twoDevicesThreeProcesses(RegionBuilder.v1()).seqlock(1, 1).build()).rejection())
                .isEqualTo(RegionRejection.TORN);
        assertThat(SharedRegion.read(twoDevicesThreeProcesses(RegionBuilder.v1()).seqlock(3, 1).build()).isOk())
                .isTrue();
    }

    @Test
    void aSeqlockThatChangesOnEveryReadTearsTheRegionAfterThreeTries() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1()).seqlock(0, 4);
        ByteBuffer buffer = builder.build();
        int seqlock = builder.seqlockOffset(0);
        ByteBuffer writer = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        HookedBytes bytes = new HookedBytes(buffer, offset -> {
            if (offset == seqlock) { // a busy writer: another whole update after each look at the seqlock
                writer.putLong(seqlock, writer.getLong(seqlock) + 2);
            }
        });

        RegionRead read = SharedRegion.read(bytes);

        assertThat(read.rejection()).isEqualTo(RegionRejection.TORN);
        assertThat(read.detail()).startsWith("process slot 0: ");
        assertThat(bytes.reads(seqlock)).isEqualTo(2 * SharedRegion.MAX_SLOT_READS);
        assertThat(writer.getLong(seqlock)).isEqualTo(4 + 2 * 2 * SharedRegion.MAX_SLOT_READS);
    }

    @Test
    void aWriteDuringTheFirstReadIsRetriedAndTheNewValuesTaken() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1()).seqlock(0, 4);
        ByteBuffer buffer = builder.build();
        int seqlock = builder.seqlockOffset(0);
        int total = builder.totalOffset(0, 0);
        ByteBuffer writer = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        HookedBytes bytes = new HookedBytes(buffer, offset -> {
            if (offset == seqlock && writer.getLong(seqlock) == 4) {
                // Right after the reader's first look: a process allocates 680 more bytes (4 -> 5 -> 6).
                writer.putLong(total, writer.getLong(total) + 680).putLong(seqlock, 6);
            }
        });

        RegionRead read = SharedRegion.read(bytes);

        assertThat(read.isOk()).isTrue();
        assertThat(read.snapshot().devices().get(0).usedBytes()).isEqualTo(1320 + 680 + 2430);
        assertThat(read.snapshot().liveProcesses()).isEqualTo(2);
        assertThat(bytes.reads(seqlock)).isEqualTo(4); // two tries, two looks each
    }

    @Test
    void onlySlotsBelowProcNumAreRead() {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1());
        HookedBytes bytes = new HookedBytes(builder.build(), offset -> { });

        assertThat(SharedRegion.read(bytes).isOk()).isTrue();

        assertThat(bytes.readsBetween(builder.slotOffset(0), builder.slotOffset(3))).isPositive();
        assertThat(bytes.readsBetween(builder.slotOffset(3), 2008896)).isZero();
    }

    @ParameterizedTest
    @CsvSource({"0", "3", "1000", "1197895"})
    void aFileShorterThanV0IsTruncated(int size) {
        ByteBuffer region = twoDevicesThreeProcesses(RegionBuilder.v1()).build(size);

        RegionRead read = SharedRegion.read(region);

        assertThat(read.rejection()).isEqualTo(RegionRejection.TRUNCATED);
        assertThat(read.detail()).isEqualTo(size + " bytes (expected: at least 1197896 for v0, 2008952 for v1)");
    }

    @Test
    void aWrongMagicIsRejectedBeforeTheSize() {
        RegionRead zero = SharedRegion.read(ByteBuffer.allocate(2008952));
        RegionRead bigEndian = SharedRegion.read(RegionBuilder.v1().putInt(0, Integer.reverseBytes(19920718)).build());
        RegionRead shortGarbage = SharedRegion.read(ByteBuffer.wrap(new byte[] {'a', 'b', 'c', 'd', 'e'}));

        assertThat(zero.rejection()).isEqualTo(RegionRejection.WRONG_MAGIC);
        assertThat(zero.detail()).isEqualTo("magic 0 (expected: 19920718)");
        assertThat(bigEndian.detail()).isEqualTo("magic " + Integer.reverseBytes(19920718) + " (expected: 19920718)");
        assertThat(shortGarbage.rejection()).isEqualTo(RegionRejection.WRONG_MAGIC);
    }

    @Test
    void aV1SizedRegionOfAnotherMajorVersionIsUnsupported() {
        RegionRead two = SharedRegion.read(RegionBuilder.v1().putInt(4, 2).putInt(8, 0).build());
        RegionRead negative = SharedRegion.read(RegionBuilder.v1().putInt(4, -1).build());

        assertThat(two.rejection()).isEqualTo(RegionRejection.UNSUPPORTED_VERSION);
        assertThat(two.detail()).isEqualTo("version 2.0 (expected: 1.x)");
        assertThat(negative.detail()).isEqualTo("version 4294967295.2 (expected: 1.x)");
    }

    @Test
    void all1024SlotsCount() {
        RegionBuilder builder = RegionBuilder.v1().deviceNum(1).uuid(0, GPU_0).procNum(1024);
        for (int slot = 0; slot < 1024; slot++) {
            builder.process(slot, slot + 1, slot + 1, 1).used(slot, 0, 1, 2, 3, slot).smUtil(slot, 0, 1)
                    .seqlock(slot, 2L * slot);
        }

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.procNum()).isEqualTo(1024);
        assertThat(snapshot.liveProcesses()).isEqualTo(1024);
        assertThat(snapshot.devices()).containsExactly(
                new DeviceUsage(0, GPU_0, 0, 0, 1023L * 1024 / 2, 1024, 2048, 3072, 1024));
        assertThat(snapshot.warnings()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"-1, 0, 0", "-2147483648, 0, 0", "1025, 1024, 4", "5000, 1024, 4"})
    void procNumOutOfRangeIsClampedAndFlagged(int procNum, int clamped, int live) {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1()).procNum(procNum);
        builder.process(1023, 9, 9, 1).used(1023, 0, 0, 0, 0, 7); // counts only once clamped to 1024

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.procNum()).isEqualTo(clamped);
        assertThat(snapshot.liveProcesses()).isEqualTo(live);
        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(clamped == 0 ? 0 : 1320 + 2430 + 90_000 + 7);
        assertThat(snapshot.warnings()).containsExactly(RegionWarning.PROC_NUM_CLAMPED);
    }

    @ParameterizedTest
    @CsvSource({"17, 16, true", "-1, 16, true", "9223372036854775807, 16, true", "16, 16, false", "0, 0, false"})
    void deviceNumOutOfRangeIsClampedTo16AndFlagged(long deviceNum, int devices, boolean flagged) {
        RegionBuilder builder = twoDevicesThreeProcesses(RegionBuilder.v1()).deviceNum(deviceNum);
        builder.uuid(15, "GPU-last").limit(15, 15).used(0, 15, 0, 0, 0, 15);

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.deviceCount()).isEqualTo(devices);
        assertThat(snapshot.warnings()).isEqualTo(flagged ? Set.of(RegionWarning.DEVICE_NUM_CLAMPED) : Set.of());
        if (devices == 16) {
            assertThat(snapshot.devices().get(2)).isEqualTo(new DeviceUsage(2, "", 0, 0, 5000, 5, 5, 5, 99));
            assertThat(snapshot.devices().get(15)).isEqualTo(new DeviceUsage(15, "GPU-last", 15, 0, 15, 0, 0, 0, 0));
        }
    }

    @Test
    void controlCharactersInAUuidAreEscaped() {
        byte[] hostile = "GPU-\n} evil{a=\"1\u001b[2J\\\u00ff\u0080-0123456789".getBytes(StandardCharsets.ISO_8859_1);
        RegionBuilder builder = RegionBuilder.v1().deviceNum(1).uuidBytes(0, hostile);

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        DeviceUsage device = snapshot.devices().get(0);
        assertThat(device.uuid()).isEqualTo("GPU-\\x0a} evil{a=\"1\\x1b[2J\\x5c\\xff\\x80-0123456789");
        assertThat(device.uuid()).doesNotContainPattern("[\\x00-\\x1f\\x7f-\\uffff]");
        assertThat(device.uuidLabel()).isEqualTo("GPU-\\x0a} evil{a=\"1\\x1b[2J\\x5c\\xff\\x80-0").hasSize(40);
        assertThat(snapshot.warnings()).containsExactly(RegionWarning.UUID_ESCAPED);
    }

    @Test
    void aUuidWithoutNulTakesAll96BytesAndIsFlagged() {
        byte[] full = new byte[96];
        Arrays.fill(full, (byte) 'A');
        RegionBuilder builder = RegionBuilder.v1().deviceNum(2).uuidBytes(0, full).uuid(1, GPU_1);

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.devices().get(0).uuid()).isEqualTo("A".repeat(96));
        assertThat(snapshot.devices().get(0).uuidLabel()).isEqualTo("A".repeat(40));
        assertThat(snapshot.devices().get(1).uuid()).isEqualTo(GPU_1);
        assertThat(snapshot.warnings()).containsExactly(RegionWarning.UUID_UNTERMINATED);
    }

    @Test
    void amountsAboveLongMaxSaturateAndAreFlagged() {
        RegionBuilder builder = RegionBuilder.v1().deviceNum(2).limit(0, -1L).smLimit(1, Long.MIN_VALUE).procNum(2)
                .process(0, 1, 1, 1).used(0, 0, 1, 1, 1, Long.MAX_VALUE).used(0, 1, 0, 0, 0, -5)
                .process(1, 2, 2, 1).used(1, 0, 1, 1, 1, 1);

        RegionSnapshot snapshot = SharedRegion.read(builder.build()).snapshot();

        assertThat(snapshot.devices()).containsExactly(
                new DeviceUsage(0, "", Long.MAX_VALUE, 0, Long.MAX_VALUE, 2, 2, 2, 0),
                new DeviceUsage(1, "", 0, Long.MAX_VALUE, Long.MAX_VALUE, 0, 0, 0, 0));
        assertThat(snapshot.warnings()).containsExactly(RegionWarning.VALUE_SATURATED);
    }

    @Test
    void aNegativeLastKernelTimeMeansNone() {
        RegionSnapshot snapshot = SharedRegion.read(RegionBuilder.v1().lastKernelTime(-5).build()).snapshot();

        assertThat(snapshot.lastKernelTime()).isZero();
        assertThat(snapshot.hasLastKernel()).isFalse();
        assertThat(snapshot.devices()).isEmpty();
    }

    @Test
    void readingLeavesTheBufferAsItWas() {
        ByteBuffer region = twoDevicesThreeProcesses(RegionBuilder.v1()).build();
        byte[] before = region.array().clone();
        region.position(0).limit(region.capacity());

        assertThat(SharedRegion.read(region).isOk()).isTrue();

        assertThat(region.array()).isEqualTo(before);
        assertThat(region.position()).isZero();
        assertThat(region.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
    }

    @Test
    void theRegionStartsAtTheBuffersPosition() {
        byte[] region = twoDevicesThreeProcesses(RegionBuilder.v1()).build().array();
        ByteBuffer prefixed = ByteBuffer.allocate(region.length + 3);
        prefixed.position(3);
        prefixed.put(region).position(3);

        RegionSnapshot snapshot = SharedRegion.read(prefixed.asReadOnlyBuffer()).snapshot();

        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(3750);
    }

    /** Reads through a buffer and runs {@code afterLongRead} after each 8-byte read, counting reads per offset. */
    private static final class HookedBytes implements RegionBytes {
        private final RegionBytes delegate;
        private final IntConsumer afterLongRead;
        private final int[] reads;

        HookedBytes(ByteBuffer buffer, IntConsumer afterLongRead) {
            this.delegate = RegionBytes.of(buffer);
            this.afterLongRead = afterLongRead;
            this.reads = new int[delegate.size()];
        }

        int reads(int offset) {
            return reads[offset];
        }

        int readsBetween(int from, int to) {
            return Arrays.stream(reads, from, to).sum();
        }

        @Override
        public int size() {
            return delegate.size();
        }

        @Override
        public byte get(int offset) {
            reads[offset]++;
            return delegate.get(offset);
        }

        @Override
        public int getInt(int offset) {
            reads[offset]++;
            return delegate.getInt(offset);
        }

        @Override
        public long getLong(int offset) {
            reads[offset]++;
            long value = delegate.getLong(offset);
            afterLongRead.accept(offset);
            return value;
        }
    }
}
