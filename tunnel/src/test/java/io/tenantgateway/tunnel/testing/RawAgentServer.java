package io.tenantgateway.tunnel.testing;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.netty.handler.ssl.SslProvider;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A hand-driven {@code /AgentService/Connect} server: answers the agent's headers, then sends whatever packets
 * a test gives it (malformed ones included) and records what the agent sends back.
 */
public final class RawAgentServer implements AutoCloseable {
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final BlockingQueue<Packet> received = new LinkedBlockingQueue<>();
    private final Server server;
    private volatile ServerCall<Packet, Packet> call;
    private volatile Metadata agentHeaders;

    public RawAgentServer(String serverId) throws IOException {
        ServerCallHandler<Packet, Packet> handler = (serverCall, headers) -> {
            call = serverCall;
            agentHeaders = headers;
            Metadata response = new Metadata();
            response.put(Metadata.Key.of("serverid", Metadata.ASCII_STRING_MARSHALLER), serverId);
            response.put(Metadata.Key.of("servercount", Metadata.ASCII_STRING_MARSHALLER), "1");
            serverCall.sendHeaders(response);
            serverCall.request(Integer.MAX_VALUE);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(Packet message) {
                    received.add(message);
                }
            };
        };
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .sslContext(TlsContexts.build(GrpcSslContexts.configure(TlsContexts.serverBuilder(
                        TunnelHarness.PKI.serverMaterial(), ClientAuthMode.NONE, Clock.systemUTC()),
                        SslProvider.JDK)))
                .executor(executor)
                .addService(ServerServiceDefinition.builder(TunnelMethods.AGENT_SERVICE)
                        .addMethod(TunnelMethods.CONNECT, handler).build())
                .build().start();
    }

    public int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    public boolean connected() {
        return call != null && !call.isCancelled();
    }

    public Metadata agentHeaders() {
        return agentHeaders;
    }

    /** Sends a packet on the stream (serialised with the call's other operations). */
    public void send(Packet packet) {
        executor.execute(() -> call.sendMessage(packet));
    }

    /** The next packet from the agent, waiting up to 10 s. */
    public Packet next() throws InterruptedException {
        Packet packet = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        if (packet == null) {
            throw new AssertionError("no packet from the agent within 10 s");
        }
        return packet;
    }

    public void endStream() {
        executor.execute(() -> call.close(Status.UNAVAILABLE.withDescription("test"), new Metadata()));
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS);
        executor.shutdownNow();
    }
}
