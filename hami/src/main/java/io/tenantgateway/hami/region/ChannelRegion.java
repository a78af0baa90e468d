package io.tenantgateway.hami.region;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Reads a region file through positional reads into small heap copies, never through a mapping. The container owns
 * its file and may truncate it at any time: a mapped page past the new end raises SIGBUS, which JDK 17 turns into an
 * {@link InternalError} thrown at some later point of the reading thread (after the faulting read has returned
 * garbage), while a positional read just comes back short. Reads the header, the tail after the slots, and the slots
 * below {@code proc_num} in chunks of {@value #CHUNK_SLOTS}; nothing else.
 *
 * <p>Seqlock: each chunk is read three times; a slot counts when its seqlock is even and equal in the first and
 * third copy, and its fields are taken from the second, which was read between them. A slot that fails is read
 * again on its own (three copies each time), up to {@link SharedRegion#MAX_SLOT_READS} tries in all.
 */
final class ChannelRegion {
    static final int CHUNK_SLOTS = 32;

    /** Where the bytes come from: a {@link FileChannel}, or a test's fake. */
    interface Source {
        long size() throws IOException;

        /** Reads into {@code dst} from {@code position}, as {@link FileChannel#read(ByteBuffer, long)}. */
        int read(ByteBuffer dst, long position) throws IOException;

        static Source of(FileChannel channel) {
            return new Source() {
                @Override
                public long size() throws IOException {
                    return channel.size();
                }

                @Override
                public int read(ByteBuffer dst, long position) throws IOException {
                    return channel.read(dst, position);
                }
            };
        }
    }

    private ChannelRegion() {
    }

    static RegionRead read(Source source) throws IOException {
        try {
            int size = (int) Math.min(source.size(), RegionLayout.V1_SIZE);
            // Everything before the slots: v1's header ends at 1856, v0's at 1848.
            RegionBytes head = copy(source, 0, Math.min(size, RegionLayout.V1_PROCS), size);
            SharedRegion.Choice choice = SharedRegion.choose(size, head);
            if (choice.rejection() != null) {
                return choice.rejection();
            }
            RegionLayout layout = choice.layout();
            RegionBytes tail = copy(source, layout.procNum(), layout.size() - layout.procNum(), size);
            RegionBytes header = RegionBytes.joined(head, layout.procNum(), tail);
            return SharedRegion.parse(header, layout, new Slots(source, layout, size));
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof EOFException) {
                return shrank();
            }
            throw e.getCause();
        } catch (EOFException e) {
            return shrank();
        }
    }

    private static RegionRead shrank() {
        return RegionRead.rejected(RegionRejection.TRUNCATED, "the file shrank while it was read (expected: its size"
                + " unchanged)");
    }

    /** {@code length} bytes from {@code position}, standing at that offset of a region of {@code size} bytes. */
    private static RegionBytes copy(Source source, int position, int length, int size) throws IOException {
        ByteBuffer piece = ByteBuffer.allocate(length);
        readFully(source, piece, position);
        return RegionBytes.at(piece.flip(), position, size);
    }

    private static void readFully(Source source, ByteBuffer dst, long position) throws IOException {
        long at = position;
        while (dst.hasRemaining()) {
            int n = source.read(dst, at);
            if (n <= 0) {
                throw new EOFException("region ends at " + at);
            }
            at += n;
        }
    }

    /** Slots below {@code proc_num}, read chunk by chunk as they are asked for. */
    private static final class Slots implements SharedRegion.SlotReader {
        private final Source source;
        private final RegionLayout layout;
        private final int size;
        private int chunkStart = -1;
        private Copies chunk;

        Slots(Source source, RegionLayout layout, int size) {
            this.source = source;
            this.layout = layout;
            this.size = size;
        }

        @Override
        public boolean read(int index, int slots, ProcessSums sums) {
            try {
                if (chunkStart < 0 || index >= chunkStart + CHUNK_SLOTS) {
                    chunkStart = index - index % CHUNK_SLOTS;
                    chunk = copies(chunkStart, Math.min(CHUNK_SLOTS, slots - chunkStart));
                }
                if (chunk.consistent(index, sums)) {
                    return true;
                }
                for (int attempt = 1; attempt < SharedRegion.MAX_SLOT_READS; attempt++) {
                    if (copies(index, 1).consistent(index, sums)) {
                        return true;
                    }
                }
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Slots {@code first} to {@code first + count - 1}: three copies with a seqlock, one without. */
        private Copies copies(int first, int count) throws IOException {
            int position = layout.slot(first);
            int length = count * layout.slotSize();
            if (!layout.hasSeqlock()) {
                return new Copies(layout, null, copy(source, position, length, size), null);
            }
            RegionBytes before = copy(source, position, length, size);
            RegionBytes fields = copy(source, position, length, size);
            return new Copies(layout, before, fields, copy(source, position, length, size));
        }
    }

    /** Successive copies of the same slots: fields taken from the middle one, seqlocks compared in the others. */
    private record Copies(RegionLayout layout, RegionBytes before, RegionBytes fields, RegionBytes after) {
        /** Adds slot {@code index} to {@code sums} if its seqlock was even and unchanged around the fields' copy. */
        boolean consistent(int index, ProcessSums sums) {
            if (layout.hasSeqlock()) {
                int seqlock = layout.slot(index) + layout.slotSeqlock();
                long first = before.getLong(seqlock);
                if ((first & 1) != 0 || after.getLong(seqlock) != first) {
                    return false;
                }
            }
            sums.stage(fields, layout, index);
            sums.commit();
            return true;
        }
    }
}
