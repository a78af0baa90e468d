package io.tenantgateway.hami.region;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Absolute little-endian reads from a region, offsets counted from the region's first byte. A seam:
 * {@link SharedRegion} reads a buffer through it, {@link ChannelRegion} reads copies of parts of a file through it,
 * and tests put a writer between two reads of a seqlock.
 */
interface RegionBytes {
    /** The region's size in bytes. */
    int size();

    byte get(int offset);

    int getInt(int offset);

    long getLong(int offset);

    /** A read-only, little-endian view of {@code region}'s bytes from its position to its limit. */
    static RegionBytes of(ByteBuffer region) {
        return at(region.slice(), 0, region.remaining());
    }

    /**
     * The bytes of {@code piece} (from index 0) standing at offset {@code base} of a region of {@code size} bytes;
     * reading outside the piece is a bug and throws {@link IndexOutOfBoundsException}.
     */
    static RegionBytes at(ByteBuffer piece, int base, int size) {
        ByteBuffer view = piece.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
        return new RegionBytes() {
            @Override
            public int size() {
                return size;
            }

            @Override
            public byte get(int offset) {
                return view.get(offset - base);
            }

            @Override
            public int getInt(int offset) {
                return view.getInt(offset - base);
            }

            @Override
            public long getLong(int offset) {
                return view.getLong(offset - base);
            }
        };
    }

    /** {@code head} below offset {@code tailBase}, {@code tail} from there on. */
    static RegionBytes joined(RegionBytes head, int tailBase, RegionBytes tail) {
        return new RegionBytes() {
            @Override
            public int size() {
                return tail.size();
            }

            @Override
            public byte get(int offset) {
                return offset < tailBase ? head.get(offset) : tail.get(offset);
            }

            @Override
            public int getInt(int offset) {
                return offset < tailBase ? head.getInt(offset) : tail.getInt(offset);
            }

            @Override
            public long getLong(int offset) {
                return offset < tailBase ? head.getLong(offset) : tail.getLong(offset);
            }
        };
    }
}
