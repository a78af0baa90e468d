package io.tenantgateway.tunnel.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.tenantgateway.tunnel.proto.CloseRequest;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;
import java.util.HexFormat;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The spec's wire vectors (bytes produced by upstream Go code), both directions, and envelope validation. */
class PacketsTest {
    static Stream<Arguments> wireVectors() {
        return Stream.of(
                Arguments.of("DIAL_REQ", Packets.dialRequest("10.0.0.1:443", 7),
                        "12150a03746370120c31302e302e302e313a3434331807"),
                Arguments.of("DIAL_RSP ok", Packets.dialResponse(7, 1), "08011a0410011807"),
                Arguments.of("DIAL_RSP error", Packets.dialFailure(7, "x"), "08011a050a01781807"),
                Arguments.of("DATA", Packets.data(1, ByteString.copyFromUtf8("hi")), "0804220608011a026869"),
                Arguments.of("CLOSE_REQ", Packets.closeRequest(1), "08022a020801"),
                Arguments.of("CLOSE_RSP", Packets.closeResponse(1), "080332021001"),
                Arguments.of("DIAL_CLS", Packets.closeDial(7), "08053a020807"),
                Arguments.of("DRAIN", Packets.drain(), "08064200"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wireVectors")
    void encodesByteExact(String name, Packet packet, String hex) {
        assertThat(HexFormat.of().formatHex(packet.toByteArray())).isEqualTo(hex);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wireVectors")
    void decodesToTheSamePacketAndValidates(String name, Packet packet, String hex) throws Exception {
        Packet decoded = Packet.parseFrom(HexFormat.of().parseHex(hex));
        assertThat(decoded).isEqualTo(packet);
        assertThat(Packets.check(decoded, false)).isNull();
    }

    @Test
    void dialRequestHasNoTypeFieldOnTheWireButDecodesAsDialReq() throws Exception {
        Packet decoded = Packet.parseFrom(HexFormat.of().parseHex("12150a03746370120c31302e302e302e313a3434331807"));
        assertThat(decoded.getType()).isEqualTo(PacketType.DIAL_REQ);
        assertThat(decoded.getDialRequest().getProtocol()).isEqualTo("tcp");
        assertThat(decoded.getDialRequest().getAddress()).isEqualTo("10.0.0.1:443");
        assertThat(decoded.getDialRequest().getRandom()).isEqualTo(7);
    }

    @Test
    void rejectsEnvelopeErrors() {
        Packet mismatch = Packet.newBuilder().setType(PacketType.DATA)
                .setCloseRequest(CloseRequest.newBuilder().setConnectID(1)).build();
        assertThat(Packets.check(mismatch, false)).isEqualTo(new Packets.Malformation("payload_mismatch",
                "DATA packet carries closeRequest (expected: data)"));
        assertThat(Packets.check(Packet.newBuilder().setType(PacketType.CLOSE_RSP).build(), false))
                .isEqualTo(new Packets.Malformation("missing_payload",
                        "CLOSE_RSP packet without payload (expected: closeResponse)"));
        assertThat(Packets.check(Packet.newBuilder().setTypeValue(77).build(), false).reason())
                .isEqualTo("unknown_type");
        // An empty message decodes as a DIAL_REQ without payload, not as something valid.
        assertThat(Packets.check(Packet.getDefaultInstance(), false).reason()).isEqualTo("missing_payload");
    }

    @Test
    void creditIsAnUnknownTypeUnlessNegotiated() throws Exception {
        Packet credit = Packets.credit(3, 65536);
        Packet decoded = Packet.parseFrom(credit.toByteArray());
        assertThat(Packets.check(decoded, false).reason()).isEqualTo("unknown_type");
        assertThat(Packets.check(decoded, true)).isNull();
        assertThatThrownBy(() -> Packets.credit(3, 0)).hasMessage("credit bytes: 0 (expected: > 0)");
    }

    @Test
    void describesWithoutPayloadBytes() {
        assertThat(Packets.describe(Packets.data(4, ByteString.copyFromUtf8("secret"))))
                .isEqualTo("DATA{connectID=4, bytes=6}");
        assertThat(Packets.describe(Packets.dialFailure(9, "refused")))
                .isEqualTo("DIAL_RSP{random=9, connectID=0, error=refused}");
        assertThat(Packets.typeName(Packet.newBuilder().setTypeValue(99).build())).isEqualTo("UNKNOWN");
    }

    @Test
    void failedDialsAlwaysCarryAnError() {
        assertThat(Packets.dialFailure(1, "").getDialResponse().getError()).isEqualTo("unknown error");
        assertThat(Packets.dialFailure(1, "").getDialResponse().getConnectID()).isZero();
    }

    @Test
    void connectionIdsStartAtOneAndIncrease() {
        ConnectionIds ids = new ConnectionIds();
        assertThat(ids.next()).isEqualTo(1);
        assertThat(ids.next()).isEqualTo(2);
    }
}
