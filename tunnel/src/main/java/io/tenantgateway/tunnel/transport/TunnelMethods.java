package io.tenantgateway.tunnel.transport;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor.Marshaller;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.tenantgateway.tunnel.proto.AgentServiceGrpc;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.proto.ProxyServiceGrpc;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The two gRPC methods with a {@link Packet} marshaller that parses DATA payloads without a second copy.
 *
 * <p>grpc-java's default protobuf marshaller reads a message into a byte array and then copies every
 * {@code bytes} field out of it again. Ours parses with aliasing on, so {@code Data.data} is a view of the one
 * array read from the transport; the array is never reused, so the view stays valid for as long as it is
 * referenced. Serialising uses the stock marshaller (it streams straight into the transport's buffers).
 *
 * <p>A {@code string} field that is not valid UTF-8 makes protobuf reject the whole message, and a marshaller that
 * throws fails the whole gRPC call: every tunnel on the stream would go for one bad DIAL_REQ. So such a message is
 * parsed again with the bad strings decoded lossily (U+FFFD) and marked ({@link #invalidUtf8}); the receiver refuses
 * just that packet (a DIAL_REQ gets its DIAL_RSP error). Only bytes that are not a protobuf message at all still
 * fail the call.
 */
public final class TunnelMethods {
    public static final String AGENT_SERVICE = AgentServiceGrpc.SERVICE_NAME;
    public static final String PROXY_SERVICE = ProxyServiceGrpc.SERVICE_NAME;

    private static final Marshaller<Packet> MARSHALLER = new AliasingPacketMarshaller();

    /** {@code /AgentService/Connect}. */
    public static final MethodDescriptor<Packet, Packet> CONNECT = AgentServiceGrpc.getConnectMethod()
            .toBuilder(MARSHALLER, MARSHALLER).build();
    /** {@code /ProxyService/Proxy}. */
    public static final MethodDescriptor<Packet, Packet> PROXY = ProxyServiceGrpc.getProxyMethod()
            .toBuilder(MARSHALLER, MARSHALLER).build();

    /** Unknown field that marks a packet whose strings were repaired; far above any field number in use. */
    private static final int INVALID_UTF8_MARK = 536_870_000;

    private TunnelMethods() {
    }

    /** Whether {@code packet} had a {@code string} field that was not UTF-8 (decoded lossily, U+FFFD, here). */
    public static boolean invalidUtf8(Packet packet) {
        return packet.getUnknownFields().hasField(INVALID_UTF8_MARK);
    }

    /** {@code bytes} parsed with every invalid UTF-8 string repaired and marked, or {@code null} if none was bad. */
    static Packet repairUtf8(byte[] bytes) throws InvalidProtocolBufferException {
        UnknownFieldSet raw = UnknownFieldSet.parseFrom(bytes);
        boolean[] repaired = new boolean[1];
        UnknownFieldSet fixed = repair(raw, Packet.getDescriptor(), repaired, 0);
        if (!repaired[0]) {
            return null;
        }
        Packet packet = Packet.parseFrom(fixed.toByteString());
        return packet.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .mergeVarintField(INVALID_UTF8_MARK, 1).build()).build();
    }

    private static UnknownFieldSet repair(UnknownFieldSet set, Descriptor type, boolean[] repaired, int depth)
            throws InvalidProtocolBufferException {
        if (depth > 8) {
            return set; // Packet nests two levels; deeper is not ours to repair
        }
        UnknownFieldSet.Builder out = UnknownFieldSet.newBuilder();
        for (var entry : set.asMap().entrySet()) {
            FieldDescriptor field = type.findFieldByNumber(entry.getKey());
            UnknownFieldSet.Field value = entry.getValue();
            if (field == null || value.getLengthDelimitedList().isEmpty()) {
                out.addField(entry.getKey(), value);
                continue;
            }
            UnknownFieldSet.Field.Builder copy = UnknownFieldSet.Field.newBuilder();
            value.getVarintList().forEach(copy::addVarint);
            value.getFixed32List().forEach(copy::addFixed32);
            value.getFixed64List().forEach(copy::addFixed64);
            value.getGroupList().forEach(copy::addGroup);
            for (ByteString piece : value.getLengthDelimitedList()) {
                if (field.getType() == FieldDescriptor.Type.STRING && !piece.isValidUtf8()) {
                    repaired[0] = true;
                    copy.addLengthDelimited(ByteString.copyFromUtf8(
                            new String(piece.toByteArray(), StandardCharsets.UTF_8)));
                } else if (field.getType() == FieldDescriptor.Type.MESSAGE) {
                    copy.addLengthDelimited(repair(UnknownFieldSet.parseFrom(piece), field.getMessageType(), repaired,
                            depth + 1).toByteString());
                } else {
                    copy.addLengthDelimited(piece);
                }
            }
            out.addField(entry.getKey(), copy.build());
        }
        return out.build();
    }

    private static final class AliasingPacketMarshaller implements Marshaller<Packet> {
        private final Marshaller<Packet> stock = ProtoUtils.marshaller(Packet.getDefaultInstance());

        @Override
        public InputStream stream(Packet value) {
            return stock.stream(value);
        }

        @Override
        public Packet parse(InputStream stream) {
            try {
                if (!(stream instanceof KnownLength)) {
                    return stock.parse(stream);
                }
                int size = stream.available();
                byte[] bytes = new byte[size];
                int offset = 0;
                while (offset < size) {
                    int read = stream.read(bytes, offset, size - offset);
                    if (read < 0) {
                        break;
                    }
                    offset += read;
                }
                if (offset != size || stream.read() != -1) {
                    throw new IOException("message length " + offset + " differs from the announced " + size);
                }
                // An immutable view: CodedInputStream.newInstance(byte[]) treats the array as mutable and then
                // copies every bytes field despite enableAliasing (found by the bench's profile: one extra copy
                // of every payload, on the agent and twice on the server).
                CodedInputStream input = UnsafeByteOperations.unsafeWrap(bytes).newCodedInput();
                input.enableAliasing(true);
                input.setSizeLimit(Integer.MAX_VALUE);
                try {
                    Packet packet = Packet.parseFrom(input, ExtensionRegistryLite.getEmptyRegistry());
                    input.checkLastTagWas(0);
                    return packet;
                } catch (InvalidProtocolBufferException e) {
                    Packet repaired = repairUtf8(bytes);
                    if (repaired == null) {
                        throw e;
                    }
                    return repaired;
                }
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("invalid Packet: " + e.getMessage()).withCause(e)
                        .asRuntimeException();
            }
        }
    }
}
