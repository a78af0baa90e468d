package io.tenantgateway.tunnel.protocol;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import io.tenantgateway.tunnel.proto.CloseDial;
import io.tenantgateway.tunnel.proto.CloseRequest;
import io.tenantgateway.tunnel.proto.CloseResponse;
import io.tenantgateway.tunnel.proto.Credit;
import io.tenantgateway.tunnel.proto.Data;
import io.tenantgateway.tunnel.proto.DialRequest;
import io.tenantgateway.tunnel.proto.DialResponse;
import io.tenantgateway.tunnel.proto.Drain;
import io.tenantgateway.tunnel.proto.Packet.PayloadCase;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.PacketType;

/**
 * Factories for every Konnectivity packet, and validation of received ones.
 *
 * <p>Every factory sets both {@code type} and the matching oneof member: receivers dispatch on {@code type}
 * (spec), so a packet without it would be read as a DIAL_REQ.
 */
public final class Packets {
    /** The only dial protocol upstream servers and agents use. */
    public static final String TCP = "tcp";
    /** Error text for CLOSE_REQ / DATA naming a connection this side does not know (upstream wording). */
    public static final String UNKNOWN_CONNECT_ID = "Unknown connectID";
    /** Error text the server answers a dial with when no agent can take it (upstream wording). */
    public static final String NO_AGENT_AVAILABLE = "No agent available";

    private static final Packet DRAIN = Packet.newBuilder().setType(PacketType.DRAIN)
            .setDrain(Drain.getDefaultInstance()).build();

    private Packets() {
    }

    public static Packet dialRequest(String address, long random) {
        return dialRequest(TCP, address, random);
    }

    public static Packet dialRequest(String protocol, String address, long random) {
        requireNonNull(protocol, "protocol");
        requireNonNull(address, "address");
        return Packet.newBuilder().setType(PacketType.DIAL_REQ)
                .setDialRequest(DialRequest.newBuilder().setProtocol(protocol).setAddress(address).setRandom(random))
                .build();
    }

    /** A successful DIAL_RSP. */
    public static Packet dialResponse(long random, long connectId) {
        return Packet.newBuilder().setType(PacketType.DIAL_RSP)
                .setDialResponse(DialResponse.newBuilder().setRandom(random).setConnectID(connectId)).build();
    }

    /** A failed DIAL_RSP: connectID 0 and a non-empty error. */
    public static Packet dialFailure(long random, String error) {
        return Packet.newBuilder().setType(PacketType.DIAL_RSP)
                .setDialResponse(DialResponse.newBuilder().setRandom(random).setError(nonEmpty(error))).build();
    }

    public static Packet data(long connectId, ByteString data) {
        requireNonNull(data, "data");
        return Packet.newBuilder().setType(PacketType.DATA)
                .setData(Data.newBuilder().setConnectID(connectId).setData(data)).build();
    }

    public static Packet closeRequest(long connectId) {
        return Packet.newBuilder().setType(PacketType.CLOSE_REQ)
                .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectId)).build();
    }

    public static Packet closeResponse(long connectId) {
        return Packet.newBuilder().setType(PacketType.CLOSE_RSP)
                .setCloseResponse(CloseResponse.newBuilder().setConnectID(connectId)).build();
    }

    public static Packet closeResponse(long connectId, String error) {
        return Packet.newBuilder().setType(PacketType.CLOSE_RSP)
                .setCloseResponse(CloseResponse.newBuilder().setConnectID(connectId).setError(nonEmpty(error)))
                .build();
    }

    public static Packet closeDial(long random) {
        return Packet.newBuilder().setType(PacketType.DIAL_CLS)
                .setCloseDial(CloseDial.newBuilder().setRandom(random)).build();
    }

    public static Packet drain() {
        return DRAIN;
    }

    /** Extension packet: the receiver may send {@code bytes} more DATA payload bytes on {@code connectId}. */
    public static Packet credit(long connectId, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("credit bytes: " + bytes + " (expected: > 0)");
        }
        return Packet.newBuilder().setType(PacketType.TG_CREDIT)
                .setTgCredit(Credit.newBuilder().setConnectID(connectId).setBytes(bytes)).build();
    }

    /**
     * What is wrong with a received packet.
     *
     * @param reason a metric label ({@code unknown_type}, {@code missing_payload}, {@code payload_mismatch},
     *     {@code invalid_credit})
     * @param message a sentence for the log
     */
    public record Malformation(String reason, String message) {
    }

    /**
     * Checks the envelope of a received packet: a known type whose oneof member matches it.
     *
     * @param creditNegotiated whether this stream negotiated the flow-control extension (TG_CREDIT is an unknown
     *     type otherwise)
     * @return {@code null} when the packet is well formed
     */
    public static Malformation check(Packet packet, boolean creditNegotiated) {
        PacketType type = packet.getType();
        if (type == PacketType.UNRECOGNIZED || (type == PacketType.TG_CREDIT && !creditNegotiated)) {
            return new Malformation("unknown_type", "unknown packet type " + packet.getTypeValue());
        }
        PayloadCase expected = payloadFor(type);
        PayloadCase actual = packet.getPayloadCase();
        if (actual == PayloadCase.PAYLOAD_NOT_SET) {
            return new Malformation("missing_payload", type + " packet without payload (expected: "
                    + name(expected) + ")");
        }
        if (actual != expected) {
            return new Malformation("payload_mismatch", type + " packet carries " + name(actual) + " (expected: "
                    + name(expected) + ")");
        }
        if (type == PacketType.TG_CREDIT && packet.getTgCredit().getBytes() <= 0) {
            return new Malformation("invalid_credit", "TG_CREDIT of " + packet.getTgCredit().getBytes()
                    + " bytes (expected: > 0)");
        }
        return null;
    }

    /** Label for metrics and logs: the upstream enum name, or {@code UNKNOWN} for unrecognised values. */
    public static String typeName(Packet packet) {
        PacketType type = packet.getType();
        return type == PacketType.UNRECOGNIZED ? "UNKNOWN" : type.name();
    }

    /** A short description for logs: type and identifiers, never payload bytes. */
    public static String describe(Packet packet) {
        return switch (packet.getPayloadCase()) {
            case DIALREQUEST -> typeName(packet) + "{address=" + packet.getDialRequest().getAddress() + ", random="
                    + packet.getDialRequest().getRandom() + "}";
            case DIALRESPONSE -> typeName(packet) + "{random=" + packet.getDialResponse().getRandom()
                    + ", connectID=" + packet.getDialResponse().getConnectID()
                    + (packet.getDialResponse().getError().isEmpty() ? ""
                            : ", error=" + packet.getDialResponse().getError()) + "}";
            case DATA -> typeName(packet) + "{connectID=" + packet.getData().getConnectID() + ", bytes="
                    + packet.getData().getData().size() + "}";
            case CLOSEREQUEST -> typeName(packet) + "{connectID=" + packet.getCloseRequest().getConnectID() + "}";
            case CLOSERESPONSE -> typeName(packet) + "{connectID=" + packet.getCloseResponse().getConnectID()
                    + (packet.getCloseResponse().getError().isEmpty() ? ""
                            : ", error=" + packet.getCloseResponse().getError()) + "}";
            case CLOSEDIAL -> typeName(packet) + "{random=" + packet.getCloseDial().getRandom() + "}";
            case DRAIN -> typeName(packet);
            case TGCREDIT -> typeName(packet) + "{connectID=" + packet.getTgCredit().getConnectID() + ", bytes="
                    + packet.getTgCredit().getBytes() + "}";
            case PAYLOAD_NOT_SET -> typeName(packet) + "{no payload}";
        };
    }

    private static PayloadCase payloadFor(PacketType type) {
        return switch (type) {
            case DIAL_REQ -> PayloadCase.DIALREQUEST;
            case DIAL_RSP -> PayloadCase.DIALRESPONSE;
            case CLOSE_REQ -> PayloadCase.CLOSEREQUEST;
            case CLOSE_RSP -> PayloadCase.CLOSERESPONSE;
            case DATA -> PayloadCase.DATA;
            case DIAL_CLS -> PayloadCase.CLOSEDIAL;
            case DRAIN -> PayloadCase.DRAIN;
            case TG_CREDIT -> PayloadCase.TGCREDIT;
            case UNRECOGNIZED -> throw new IllegalArgumentException("no payload for an unrecognised type");
        };
    }

    private static String name(PayloadCase payload) {
        return switch (payload) {
            case DIALREQUEST -> "dialRequest";
            case DIALRESPONSE -> "dialResponse";
            case DATA -> "data";
            case CLOSEREQUEST -> "closeRequest";
            case CLOSERESPONSE -> "closeResponse";
            case CLOSEDIAL -> "closeDial";
            case DRAIN -> "drain";
            case TGCREDIT -> "tgCredit";
            case PAYLOAD_NOT_SET -> "nothing";
        };
    }

    private static String nonEmpty(String error) {
        requireNonNull(error, "error");
        return error.isEmpty() ? "unknown error" : error;
    }
}
