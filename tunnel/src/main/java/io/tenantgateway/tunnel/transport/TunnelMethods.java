package io.tenantgateway.tunnel.transport;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.ExtensionRegistryLite;
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

/**
 * The two gRPC methods with a {@link Packet} marshaller that parses DATA payloads without a second copy.
 *
 * <p>grpc-java's default protobuf marshaller reads a message into a byte array and then copies every
 * {@code bytes} field out of it again. Ours parses with aliasing on, so {@code Data.data} is a view of the one
 * array read from the transport; the array is never reused, so the view stays valid for as long as it is
 * referenced. Serialising uses the stock marshaller (it streams straight into the transport's buffers).
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

    private TunnelMethods() {
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
                Packet packet = Packet.parseFrom(input, ExtensionRegistryLite.getEmptyRegistry());
                input.checkLastTagWas(0);
                return packet;
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("invalid Packet: " + e.getMessage()).withCause(e)
                        .asRuntimeException();
            }
        }
    }
}
