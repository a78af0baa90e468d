package io.tenantgateway.tunnel.transport;

import com.google.protobuf.ByteOutput;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * {@link ByteString} → {@link ByteBuf} without copying.
 *
 * <p>{@code ByteString.asReadOnlyByteBuffer()} gives a read-only view, and a read-only buffer breaks consumers that
 * work in place: the JDK's {@code SSLEngine} decrypts TLS records inside its input buffer, so an {@code SslHandler}
 * on a tunnel channel failed with {@code ReadOnlyBufferException} whenever a whole record arrived in one DATA.
 * Payloads parsed by {@link TunnelMethods}' marshaller alias a byte array that belongs to that one packet and is
 * never read again once the payload is handed on, so handing out a writable view of it is safe.
 */
public final class ByteStrings {
    private ByteStrings() {
    }

    /**
     * A buffer over {@code bytes}' own storage: writable where that storage is a byte array (always, for payloads
     * from {@link TunnelMethods}), a composite when the string is a rope. The caller owns the returned buffer; the
     * {@code ByteString} must not be used by anyone else afterwards.
     */
    public static ByteBuf wrap(ByteString bytes) {
        if (bytes.isEmpty()) {
            return Unpooled.EMPTY_BUFFER;
        }
        Views views = new Views();
        try {
            UnsafeByteOperations.unsafeWriteTo(bytes, views);
        } catch (IOException e) {
            throw new UncheckedIOException("ByteString views never fail", e);
        }
        return views.result();
    }

    /** Collects the pieces a {@code ByteString} writes itself as. */
    private static final class Views extends ByteOutput {
        private ByteBuf single;
        private CompositeByteBuf composite;

        private void add(ByteBuf piece) {
            if (single == null && composite == null) {
                single = piece;
                return;
            }
            if (composite == null) {
                composite = Unpooled.compositeBuffer(Integer.MAX_VALUE);
                composite.addComponent(true, single);
                single = null;
            }
            composite.addComponent(true, piece);
        }

        ByteBuf result() {
            return composite != null ? composite : single;
        }

        @Override
        public void write(byte value) {
            add(Unpooled.wrappedBuffer(new byte[] {value}));
        }

        @Override
        public void write(byte[] value, int offset, int length) {
            add(Unpooled.copiedBuffer(value, offset, length)); // the writer may reuse its array
        }

        @Override
        public void writeLazy(byte[] value, int offset, int length) {
            add(Unpooled.wrappedBuffer(value, offset, length));
        }

        @Override
        public void write(ByteBuffer value) {
            add(Unpooled.copiedBuffer(value));
        }

        @Override
        public void writeLazy(ByteBuffer value) {
            add(Unpooled.wrappedBuffer(value));
        }
    }
}
