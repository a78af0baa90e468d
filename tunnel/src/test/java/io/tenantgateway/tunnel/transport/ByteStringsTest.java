package io.tenantgateway.tunnel.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.buffer.ByteBuf;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ByteStringsTest {
    @Test
    void aPayloadParsedByTheMarshallerBecomesAWritableViewOfItsOwnBytes() throws Exception {
        byte[] payload = "tls record".getBytes(StandardCharsets.UTF_8);
        Packet sent = Packets.data(7, ByteString.copyFrom(payload));
        Packet parsed = TunnelMethods.CONNECT.parseResponse(new KnownLengthStream(sent.toByteArray()));

        ByteBuf view = ByteStrings.wrap(parsed.getData().getData());
        try {
            assertThat(view.isReadOnly()).isFalse(); // an SSLEngine decrypts in place
            assertThat(view.toString(StandardCharsets.UTF_8)).isEqualTo("tls record");
            view.setByte(0, 'T');
            assertThat(view.toString(StandardCharsets.UTF_8)).isEqualTo("Tls record");
        } finally {
            view.release();
        }
    }

    @Test
    void theMarshallerAliasesThePayloadInsteadOfCopyingIt() throws Exception {
        byte[] wire = Packets.data(7, ByteString.copyFromUtf8("payload")).toByteArray();
        Packet parsed = TunnelMethods.CONNECT.parseResponse(new KnownLengthStream(wire));
        ByteBuf view = ByteStrings.wrap(parsed.getData().getData());
        try {
            // The view shares the array the marshaller read the message into: no copy was made while parsing.
            assertThat(view.hasArray()).isTrue();
            byte[] backing = view.array();
            assertThat(backing.length).isEqualTo(wire.length);
            assertThat(backing).isEqualTo(wire);
        } finally {
            view.release();
        }
    }

    @Test
    void aRopeBecomesACompositeWithTheSameBytes() {
        ByteString rope = ByteString.copyFromUtf8("hello, ").concat(UnsafeByteOperations.unsafeWrap(
                ByteBuffer.wrap("tunnel".getBytes(StandardCharsets.UTF_8))));
        ByteBuf view = ByteStrings.wrap(rope);
        try {
            assertThat(view.toString(StandardCharsets.UTF_8)).isEqualTo("hello, tunnel");
        } finally {
            view.release();
        }
    }

    @Test
    void emptyIsTheEmptyBuffer() {
        assertThat(ByteStrings.wrap(ByteString.EMPTY).readableBytes()).isZero();
    }

    @Test
    void theMarshallerStillParsesFromPlainStreams() throws Exception {
        Packet sent = Packets.data(3, ByteString.copyFromUtf8("x"));
        Packet parsed = TunnelMethods.CONNECT.parseResponse(new ByteArrayInputStream(sent.toByteArray()) {
            @Override
            public synchronized int available() {
                return 0; // not a KnownLength stream: takes the stock path
            }
        });
        assertThat(parsed).isEqualTo(sent);
        assertThat(CodedInputStream.newInstance(sent.toByteArray()).readTag()).isNotZero();
    }

    /** What grpc-netty hands the marshaller: a stream that knows its length. */
    private static final class KnownLengthStream extends ByteArrayInputStream implements io.grpc.KnownLength {
        KnownLengthStream(byte[] bytes) {
            super(bytes);
        }
    }
}
