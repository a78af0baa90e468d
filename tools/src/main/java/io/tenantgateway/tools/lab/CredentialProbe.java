package io.tenantgateway.tools.lab;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslProvider;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.Headers;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One {@code /AgentService/Connect} attempt with given credentials, as an agent makes it: answers whether the
 * konnectivity-server accepted them (response headers with {@code serverid}) or how it refused (the status). The
 * stream is cancelled right after the answer, so an accepted probe never carries a tunnel.
 */
final class CredentialProbe {
    private CredentialProbe() {
    }

    /** @param serverId the {@code serverid} header when accepted; otherwise empty, and {@code refusal} says why */
    record Outcome(boolean accepted, String serverId, String refusal) {
    }

    /**
     * @param trust CA the probe verifies the server against (a CA certificate is public: the probe trusts the
     *     target server so that what is tested is the server's judgement of the credentials)
     * @param identity client certificate to present, or {@code null}
     * @param token bearer token to send, or {@code null}
     */
    static Outcome attempt(InetSocketAddress server, TrustBundle trust, CertBundle identity, String token,
            String agentId, EventLoopGroup group, Duration timeout, Clock clock) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress(server.getHostString(), server.getPort())
                .eventLoopGroup(group)
                .channelType(Transports.socketChannel(group))
                .sslContext(TlsContexts.build(GrpcSslContexts.configure(
                        TlsContexts.clientBuilder(TlsMaterial.of(identity, trust), clock), SslProvider.JDK)))
                .directExecutor()
                .userAgent("tenant-gateway-lab-credential-probe")
                .build();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        ClientCall<Packet, Packet> call = channel.newCall(TunnelMethods.CONNECT,
                CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS));
        Metadata headers = new Metadata();
        headers.put(key(Headers.AGENT_ID), agentId);
        headers.put(key(Headers.AGENT_IDENTIFIERS), "");
        if (token != null) {
            headers.put(key(Headers.AUTHORIZATION), Headers.bearer(token));
        }
        try {
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata answer) {
                    String serverId = answer.get(key(Headers.SERVER_ID));
                    outcome.complete(new Outcome(true, serverId == null ? "" : serverId, ""));
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    outcome.complete(new Outcome(false, "", describe(status)));
                }
            }, headers);
            call.request(1);
            return outcome.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return new Outcome(false, "", "probe failed: " + e.getCause());
        } catch (TimeoutException e) {
            return new Outcome(false, "", "no answer within " + Lab.seconds(timeout));
        } finally {
            call.cancel("credential probe done", null);
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static String describe(Status status) {
        StringBuilder text = new StringBuilder(status.getCode().name());
        if (status.getDescription() != null) {
            text.append(": ").append(status.getDescription());
        }
        Throwable cause = status.getCause();
        while (cause != null && cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        if (cause != null && cause.getMessage() != null) {
            text.append(" (").append(cause.getMessage()).append(')');
        }
        return text.toString();
    }

    private static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }
}
