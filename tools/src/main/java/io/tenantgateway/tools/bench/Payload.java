package io.tenantgateway.tools.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The bytes the bench sends: one shared, read-only, direct 64 KiB chunk that every writer slices. Writers then cost
 * no copy and no allocation per chunk, so the client's and target's CPU goes to the transport being measured.
 */
final class Payload {
    static final int CHUNK = 64 * 1024;
    private static final ByteBuf SHARED = Unpooled.unreleasableBuffer(filled());

    private Payload() {
    }

    /** A view of {@code size} (≤ {@link #CHUNK}) payload bytes; releasing it is a no-op. */
    static ByteBuf slice(int size) {
        return SHARED.slice(0, size);
    }

    private static ByteBuf filled() {
        ByteBuf chunk = Unpooled.directBuffer(CHUNK, CHUNK);
        for (int i = 0; i < CHUNK; i++) {
            chunk.writeByte((i * 31 + 7) & 0xff);
        }
        return chunk;
    }
}
