package io.tenantgateway.hami.region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Region files: read with positional reads ({@link SharedRegion#read(Path)}, {@link ChannelRegion}), and a
 * read-only mapping read as a buffer. A fake {@link ChannelRegion.Source} shrinks the file or writes between reads.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedRegionFileTest {
    private static final String GPU = "GPU-8f3c2a51-0d4e-4b7a-9c1e-2f6d7a8b9c0d";

    @TempDir
    Path dir;

    private static RegionBuilder oneProcess(RegionBuilder region) {
        return region.deviceNum(1).uuid(0, GPU).limit(0, 2L << 30).smLimit(0, 25).procNum(1)
                .process(0, 7, 4007, 1).used(0, 0, 100, 200, 300, 600).smUtil(0, 0, 12);
    }

    private Path write(String name, ByteBuffer region) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, region.array());
        return file;
    }

    @Test
    void readsAV1File() throws IOException {
        Path file = write("3f0c.cache", oneProcess(RegionBuilder.v1()).seqlock(0, 2).lastKernelTime(1_700_000_000)
                .build());

        RegionRead read = SharedRegion.read(file);

        assertThat(read.snapshot().version()).isEqualTo(RegionVersion.V1);
        assertThat(read.snapshot().devices()).containsExactly(
                new DeviceUsage(0, GPU, 2L << 30, 25, 600, 100, 200, 300, 12));
        assertThat(read.snapshot().lastKernelTime()).isEqualTo(1_700_000_000L);
        assertThat(read.snapshot().warnings()).isEmpty();
    }

    @Test
    void readsAV0FileOfTheSizeHamiCoreWrote() throws IOException {
        Path file = write("old.cache", oneProcess(RegionBuilder.v0()).build());

        RegionRead read = SharedRegion.read(file);

        assertThat(Files.size(file)).isEqualTo(1197897);
        assertThat(read.snapshot().version()).isEqualTo(RegionVersion.V0);
        assertThat(read.snapshot().devices()).containsExactly(
                new DeviceUsage(0, GPU, 2L << 30, 25, 600, 100, 200, 300, 12));
    }

    @Test
    void aReadOnlyMappingReadsAsABuffer() throws IOException {
        Path file = write("mapped.cache", oneProcess(RegionBuilder.v1()).build());
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());

            assertThat(mapped.isReadOnly()).isTrue();
            assertThat(SharedRegion.read(mapped).snapshot().devices())
                    .containsExactly(new DeviceUsage(0, GPU, 2L << 30, 25, 600, 100, 200, 300, 12));
        }
    }

    @Test
    void aKeptChannelSeesTheWritersUpdatesAndKeepsItsPosition() throws IOException {
        Path file = write("live.cache", oneProcess(RegionBuilder.v1()).build());
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            assertThat(SharedRegion.read(channel).snapshot().devices().get(0).usedBytes()).isEqualTo(600);

            try (FileChannel writer = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ByteBuffer total = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 4096);
                writer.write(total, RegionBuilder.v1().totalOffset(0, 0));
            }

            assertThat(SharedRegion.read(channel).snapshot().devices().get(0).usedBytes()).isEqualTo(4096);
            assertThat(channel.position()).isZero();
        }
    }

    @Test
    void aLongerFileIsReadUpToTheLargestLayout() throws IOException {
        Path file = write("long.cache", oneProcess(RegionBuilder.v1()).build(3_000_000));

        assertThat(SharedRegion.read(file).snapshot().devices().get(0).usedBytes()).isEqualTo(600);
    }

    @Test
    void aShortOrEmptyFileIsTruncated() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.cache"));
        Path cut = write("cut.cache", oneProcess(RegionBuilder.v1()).build(4096));

        assertThat(SharedRegion.read(empty).detail())
                .isEqualTo("0 bytes (expected: at least 1197896 for v0, 2008952 for v1)");
        assertThat(SharedRegion.read(cut).detail())
                .isEqualTo("4096 bytes (expected: at least 1197896 for v0, 2008952 for v1)");
    }

    @Test
    void aWrongMagicOrVersionIsRejectedFromTheFile() throws IOException {
        Path zeros = write("zeros.cache", ByteBuffer.allocate(2008952));
        Path v2 = write("v2.cache", oneProcess(RegionBuilder.v1()).putInt(4, 2).build());

        assertThat(SharedRegion.read(zeros).detail()).isEqualTo("magic 0 (expected: 19920718)");
        assertThat(SharedRegion.read(v2).detail()).isEqualTo("version 2.2 (expected: 1.x)");
    }

    @Test
    void refusesASymbolicLinkAndADirectory() throws IOException {
        Path target = write("real.cache", oneProcess(RegionBuilder.v1()).build());
        Path link = Files.createSymbolicLink(dir.resolve("link.cache"), target);
        Path directory = Files.createDirectory(dir.resolve("dir.cache"));

        assertThatThrownBy(() -> SharedRegion.read(link)).isInstanceOf(FileSystemException.class)
                .hasMessage(link + ": not a regular file (expected: a region file)");
        assertThatThrownBy(() -> SharedRegion.read(directory)).isInstanceOf(FileSystemException.class)
                .hasMessage(directory + ": not a regular file (expected: a region file)");
        assertThatThrownBy(() -> SharedRegion.read(dir.resolve("missing.cache")))
                .isInstanceOf(FileSystemException.class);
    }

    @Test
    void aFileThatShrinksDuringTheReadIsTruncated() throws IOException {
        RegionBuilder builder = oneProcess(RegionBuilder.v1()).procNum(40);
        // The size said v1; then every read past the first slot finds the end of the file.
        FakeSource source = new FakeSource(builder.build().array(), 2008952, builder.slotOffset(1));

        RegionRead read = ChannelRegion.read(source);

        assertThat(read.rejection()).isEqualTo(RegionRejection.TRUNCATED);
        assertThat(read.detail()).isEqualTo("the file shrank while it was read (expected: its size unchanged)");
    }

    @Test
    void readsOnlyTheHeaderTheTailAndTheSlotsBelowProcNumInChunks() throws IOException {
        RegionBuilder builder = RegionBuilder.v1().deviceNum(1).procNum(70);
        for (int slot = 0; slot < 71; slot++) {
            builder.process(slot, slot, slot, 1).used(slot, 0, 0, 0, 0, 1).seqlock(slot, 2);
        }
        FakeSource source = new FakeSource(builder.build().array());

        RegionSnapshot snapshot = ChannelRegion.read(source).snapshot();

        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(70);
        int slots = builder.slotOffset(0);
        assertThat(source.reads).containsExactly(
                new long[] {0, 1856}, new long[] {2008896, 56},
                new long[] {slots, 32 * 1960}, new long[] {slots, 32 * 1960}, new long[] {slots, 32 * 1960},
                new long[] {builder.slotOffset(32), 32 * 1960}, new long[] {builder.slotOffset(32), 32 * 1960},
                new long[] {builder.slotOffset(32), 32 * 1960},
                new long[] {builder.slotOffset(64), 6 * 1960}, new long[] {builder.slotOffset(64), 6 * 1960},
                new long[] {builder.slotOffset(64), 6 * 1960});
    }

    @Test
    void readsV0SlotsOnceForLackOfASeqlock() throws IOException {
        FakeSource source = new FakeSource(oneProcess(RegionBuilder.v0()).build().array());

        RegionSnapshot snapshot = ChannelRegion.read(source).snapshot();

        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(600);
        assertThat(source.reads).containsExactly(
                new long[] {0, 1856}, new long[] {1197880, 16}, new long[] {1848, 1168});
    }

    @Test
    void aSlotWrittenDuringTheChunkReadIsReadAgainOnItsOwn() throws IOException {
        RegionBuilder builder = oneProcess(RegionBuilder.v1()).procNum(3).process(1, 8, 8, 1).process(2, 9, 9, 1)
                .used(1, 0, 0, 0, 0, 10).used(2, 0, 0, 0, 0, 20).seqlock(1, 4);
        byte[] file = builder.build().array();
        ByteBuffer writer = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int seqlock = builder.seqlockOffset(1);
        int total = builder.totalOffset(1, 0);
        FakeSource source = new FakeSource(file);
        source.afterRead = count -> {
            if (count == 3) { // between the chunk's first and second copy: slot 1 grows by 5 (4 -> 6)
                writer.putLong(total, writer.getLong(total) + 5).putLong(seqlock, 6);
            }
        };

        RegionSnapshot snapshot = ChannelRegion.read(source).snapshot();

        assertThat(snapshot.devices().get(0).usedBytes()).isEqualTo(600 + 15 + 20);
        assertThat(source.reads).hasSize(2 + 3 + 3); // header, tail; the chunk; slot 1 alone
        assertThat(source.reads.get(5)).containsExactly(builder.slotOffset(1), 1960);
    }

    @Test
    void aSlotWrittenOnEveryReadTearsTheRegion() throws IOException {
        RegionBuilder builder = oneProcess(RegionBuilder.v1()).seqlock(0, 4);
        byte[] file = builder.build().array();
        ByteBuffer writer = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int seqlock = builder.seqlockOffset(0);
        FakeSource source = new FakeSource(file);
        source.afterRead = count -> writer.putLong(seqlock, writer.getLong(seqlock) + 2);

        RegionRead read = ChannelRegion.read(source);

        assertThat(read.rejection()).isEqualTo(RegionRejection.TORN);
        assertThat(read.detail()).startsWith("process slot 0: ");
        assertThat(source.reads).hasSize(2 + 3 * SharedRegion.MAX_SLOT_READS);
    }

    @Test
    void anOddSeqlockReadThroughTheFileTearsTheRegion() throws IOException {
        Path file = write("odd.cache", oneProcess(RegionBuilder.v1()).seqlock(0, 3).build());

        assertThat(SharedRegion.read(file).rejection()).isEqualTo(RegionRejection.TORN);
    }

    /** A file in memory: logs each read's position and length, and may end early or run a writer after a read. */
    private static final class FakeSource implements ChannelRegion.Source {
        private final byte[] file;
        private final long size;
        private final int end;
        final List<long[]> reads = new ArrayList<>();
        IntConsumer afterRead = count -> { };

        FakeSource(byte[] file) {
            this(file, file.length, file.length);
        }

        /** Reports {@code size} but has only the bytes below {@code end}. */
        FakeSource(byte[] file, long size, int end) {
            this.file = file;
            this.size = size;
            this.end = end;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public int read(ByteBuffer dst, long position) {
            reads.add(new long[] {position, dst.remaining()});
            int start = (int) position;
            int n = start < end ? Math.min(dst.remaining(), end - start) : 0;
            if (n == 0) {
                return -1;
            }
            dst.put(file, start, n);
            afterRead.accept(reads.size());
            return n;
        }
    }
}
