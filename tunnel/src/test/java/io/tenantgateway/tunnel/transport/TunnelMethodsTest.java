package io.tenantgateway.tunnel.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.grpc.StatusRuntimeException;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import io.tenantgateway.tunnel.protocol.Packets;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/** The marshaller refuses one packet, not the call, for a string that is not UTF-8. */
class TunnelMethodsTest {
    @Test
    void aDialRequestWithAnAddressThatIsNotUtf8IsRepairedAndMarked() throws Exception {
        byte[] wire = dialRequest(new byte[] {'a', (byte) 0xff, (byte) 0xc3, ':', '8', '0'}, 42);
        Packet packet = TunnelMethods.CONNECT.parseRequest(known(wire));
        assertThat(packet.getType()).isEqualTo(PacketType.DIAL_REQ);
        assertThat(packet.getDialRequest().getRandom()).isEqualTo(42);
        assertThat(packet.getDialRequest().getProtocol()).isEqualTo("tcp");
        assertThat(packet.getDialRequest().getAddress()).isEqualTo("a\uFFFD\uFFFD:80");
        assertThat(TunnelMethods.invalidUtf8(packet)).isTrue();
    }

    @Test
    void validPacketsAreNotMarkedAndGarbageStillFails() {
        Packet valid = TunnelMethods.CONNECT.parseRequest(known(Packets.dialFailure(7, "é").toByteArray()));
        assertThat(TunnelMethods.invalidUtf8(valid)).isFalse();
        assertThatThrownBy(() -> TunnelMethods.CONNECT.parseRequest(known(new byte[] {0x0a, 0x7f, 0x01})))
                .isInstanceOf(StatusRuntimeException.class).hasMessageContaining("invalid Packet");
    }

    /** Packet{type: DIAL_REQ, dialRequest: {protocol: "tcp", address: raw, random}} written by hand. */
    private static byte[] dialRequest(byte[] address, long random) throws Exception {
        ByteArrayOutputStream inner = new ByteArrayOutputStream();
        CodedOutputStream in = CodedOutputStream.newInstance(inner);
        in.writeString(1, "tcp");
        in.writeBytes(2, ByteString.copyFrom(address));
        in.writeInt64(3, random);
        in.flush();
        ByteArrayOutputStream outer = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(outer);
        out.writeEnum(1, PacketType.DIAL_REQ_VALUE);
        out.writeBytes(Packet.DIALREQUEST_FIELD_NUMBER, ByteString.copyFrom(inner.toByteArray()));
        out.flush();
        return outer.toByteArray();
    }

    /** grpc hands the marshaller a KnownLength stream. */
    private static InputStream known(byte[] bytes) {
        return new KnownLengthStream(bytes);
    }

    private static final class KnownLengthStream extends ByteArrayInputStream implements io.grpc.KnownLength {
        KnownLengthStream(byte[] bytes) {
            super(bytes);
        }
    }
}
