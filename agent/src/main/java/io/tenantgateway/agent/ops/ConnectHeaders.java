package io.tenantgateway.agent.ops;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsFailures;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Headers;
import io.tenantgateway.tunnel.transport.Transports;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Opens {@code /AgentService/Connect} the way the agent does (same TLS, same {@code agentid},
 * {@code agentidentifiers} and {@code authorization} metadata) only to read the server's response headers, then
 * cancels the stream. That is the one check that proves authentication end to end: a server sends
 * {@code serverid}/{@code servercount} only after it accepted the agent.
 *
 * <p>While the stream is open (one round trip) the server counts it as an agent. So it registers under its own id
 * ({@code <agent-id>-doctor}, never clashing with the running agent's) and with no identifiers, which keeps
 * {@code destHost} strategies from routing dials to it; a dial routed to it by chance is never answered and fails at
 * the client's backstop — the price of checking with the real protocol.
 */
final class ConnectHeaders {
    /**
     * The server's answer.
     *
     * @param serverId {@code serverid}
     * @param serverCount {@code servercount}
     */
    record Identity(String serverId, int serverCount) {
    }

    /** The stream ended without headers; carries the gRPC status. */
    static final class ConnectFailedException extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Status status;

        ConnectFailedException(Status status, String message) {
            super(message, status.getCause());
            this.status = status;
        }

        Status status() {
            return status;
        }
    }

    private ConnectHeaders() {
    }

    /**
     * @param token the bearer token, or {@code null} (mTLS)
     * @param alpn ALPN protocols to offer ({@code --alpn-proto}); empty for gRPC's {@code h2}
     */
    static CompletableFuture<Identity> read(EventLoopGroup group, String host, int port, TlsMaterial tls,
            List<String> alpn, String agentId, String token, Clock clock, Duration timeout) {
        SslContextBuilder ssl = GrpcSslContexts.configure(TlsContexts.clientBuilder(tls, clock), SslProvider.JDK);
        if (!alpn.isEmpty()) {
            TlsContexts.alpn(ssl, alpn.toArray(String[]::new));
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress(host, port)
                .eventLoopGroup(group)
                .channelType(Transports.socketChannel(group))
                .sslContext(TlsContexts.build(ssl))
                .directExecutor()
                .disableRetry()
                .userAgent("tenant-gateway-doctor")
                .build();
        Metadata metadata = new Metadata();
        metadata.put(key(Headers.AGENT_ID), agentId + "-doctor");
        metadata.put(key(Headers.AGENT_IDENTIFIERS), "");
        if (token != null) {
            metadata.put(key(Headers.AUTHORIZATION), Headers.bearer(token));
        }
        CompletableFuture<Identity> result = new CompletableFuture<>();
        ClientCall<Packet, Packet> call = channel.newCall(TunnelMethods.CONNECT,
                CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata headers) {
                try {
                    result.complete(new Identity(Headers.single(Headers.SERVER_ID, values(headers, Headers.SERVER_ID)),
                            Headers.serverCount(values(headers, Headers.SERVER_COUNT))));
                } catch (IllegalArgumentException e) {
                    result.completeExceptionally(new ConnectFailedException(Status.INTERNAL,
                            "invalid response headers: " + e.getMessage()));
                }
                call.cancel("doctor: response headers read", null);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                result.completeExceptionally(new ConnectFailedException(status, status.getCode()
                        + (status.getDescription() == null ? "" : ": " + status.getDescription())
                        + (status.getCause() == null ? "" : ": " + TlsFailures.describe(status.getCause()))));
            }
        }, metadata);
        result.whenComplete((identity, failure) -> channel.shutdownNow());
        return result;
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }

    private static List<String> values(Metadata headers, String name) {
        List<String> out = new ArrayList<>();
        Iterable<String> all = headers.getAll(key(name));
        if (all != null) {
            all.forEach(out::add);
        }
        return out;
    }
}
