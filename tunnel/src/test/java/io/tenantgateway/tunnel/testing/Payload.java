package io.tenantgateway.tunnel.testing;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A deterministic pseudo-random byte stream (xorshift64*) and SHA-256 helpers, so tests never hold 64 MiB. */
public final class Payload {
    private long state;

    public Payload(long seed) {
        this.state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
    }

    /**
     * Appends {@code length} bytes of the stream to {@code buf}, in one buffer operation (tests run with paranoid
     * leak detection, which records a stack trace on every ByteBuf access).
     */
    public void fill(ByteBuf buf, int length) {
        long[] longs = new long[(length + 7) / 8];
        for (int i = 0; i < longs.length; i++) {
            longs[i] = nextLong();
        }
        ByteBuffer bytes = ByteBuffer.allocate(longs.length * 8);
        bytes.asLongBuffer().put(longs);
        buf.writeBytes(bytes.array(), 0, length);
    }

    private long nextLong() {
        long x = state;
        x ^= x >>> 12;
        x ^= x << 25;
        x ^= x >>> 27;
        state = x;
        return x * 0x2545F4914F6CDD1DL;
    }

    /** SHA-256 of the first {@code length} bytes of the stream for {@code seed}. */
    public static String sha256(long seed, long length) {
        Payload payload = new Payload(seed);
        MessageDigest digest = newDigest();
        ByteBuf chunk = io.netty.buffer.Unpooled.buffer(64 * 1024);
        long remaining = length;
        while (remaining > 0) {
            int size = (int) Math.min(remaining, 64 * 1024);
            chunk.clear();
            payload.fill(chunk, size);
            digest.update(chunk.nioBuffer());
            remaining -= size;
        }
        chunk.release();
        return hex(digest);
    }

    public static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String hex(MessageDigest digest) {
        return HexFormat.of().formatHex(digest.digest());
    }
}
