package io.tenantgateway.webhook;

import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * Bytes being written (a JSON patch as it is made), held in {@value #SEGMENT}-byte segments, each charged before it
 * is allocated: no doubling copy as a growing array makes, and a patch the budget cannot hold stops at the segment
 * that does not fit (the charge throws) instead of being built. Read back in place with {@link #stream()}.
 *
 * <p>Not thread-safe: one decision writes it, then reads it.
 */
final class ChargedOutput extends OutputStream {
    static final int SEGMENT = 16 * 1024;

    private final LongConsumer charge;
    private final List<byte[]> segments = new ArrayList<>();
    private int inLast = SEGMENT;
    private long size;
    private long charged;

    /** @param charge reserves bytes before they are held; throws to refuse */
    ChargedOutput(LongConsumer charge) {
        this.charge = charge;
    }

    @Override
    public void write(int b) {
        room()[inLast++] = (byte) b;
        size++;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) {
        while (length > 0) {
            byte[] segment = room();
            int n = Math.min(length, SEGMENT - inLast);
            System.arraycopy(bytes, offset, segment, inLast, n);
            inLast += n;
            offset += n;
            length -= n;
            size += n;
        }
    }

    private byte[] room() {
        if (inLast == SEGMENT) {
            charge.accept(SEGMENT + 16);
            charged += SEGMENT + 16;
            segments.add(new byte[SEGMENT]);
            inLast = 0;
        }
        return segments.get(segments.size() - 1);
    }

    long size() {
        return size;
    }

    /** The bytes charged so far, for the caller to give back once the bytes are gone. */
    long charged() {
        return charged;
    }

    /** The bytes written, in place. */
    InputStream stream() {
        return new InputStream() {
            private long read;

            @Override
            public int read() {
                if (read >= size) {
                    return -1;
                }
                byte b = segments.get((int) (read / SEGMENT))[(int) (read % SEGMENT)];
                read++;
                return b & 0xff;
            }

            @Override
            public int read(byte[] into, int offset, int length) {
                if (read >= size) {
                    return -1;
                }
                int inSegment = (int) (read % SEGMENT);
                int n = (int) Math.min(Math.min(length, SEGMENT - inSegment), size - read);
                System.arraycopy(segments.get((int) (read / SEGMENT)), inSegment, into, offset, n);
                read += n;
                return n;
            }
        };
    }
}
