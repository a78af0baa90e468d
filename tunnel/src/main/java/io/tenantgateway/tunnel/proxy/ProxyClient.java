package io.tenantgateway.tunnel.proxy;

import static java.util.Objects.requireNonNull;

import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.tunnel.transport.TlsProviders;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@code ProxyService} client, the role kube-apiserver plays: dials {@code host:port} through a
 * konnectivity-server and returns a Netty channel carrying the tunnelled bytes.
 *
 * <pre>{@code
 * try (ProxyClient client = ProxyClient.builder().unixSocket(path).build()) {
 *     Channel ch = client.dial("10.96.0.10", 443, new ChannelInitializer<>() { ... }).get();
 * }
 * }</pre>
 *
 * <p>Each gRPC connection to the server is pinned to one event loop and runs its callbacks there; every tunnel
 * channel lives on the loop of the connection it uses, so the relay needs no thread hand-offs.
 */
public final class ProxyClient implements AutoCloseable {
    /** Per-stream receive window: one stream per tunnel, so this is what a slow reader lets queue up. */
    private static final int HTTP2_WINDOW = 1024 * 1024;

    private final EventLoopGroup ownedGroup;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<EventLoop> loops = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final Duration dialTimeout;

    private ProxyClient(Builder builder) {
        EventLoopGroup group = builder.group;
        ownedGroup = group == null ? Transports.newGroup(builder.connections, "tunnel-proxy-client") : null;
        if (group == null) {
            group = ownedGroup;
        }
        this.dialTimeout = builder.dialTimeout;
        for (int i = 0; i < builder.connections; i++) {
            EventLoop loop = group.next();
            NettyChannelBuilder channel;
            if (builder.unixSocket != null) {
                channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(builder.unixSocket.toString()))
                        .channelType(Transports.domainSocketChannel(loop), DomainSocketAddress.class)
                        .usePlaintext();
            } else {
                channel = NettyChannelBuilder.forAddress(builder.host, builder.port)
                        .channelType(Transports.socketChannel(loop));
                if (builder.tls != null) {
                    channel.sslContext(TlsContexts.build(GrpcSslContexts.configure(
                            TlsContexts.clientBuilder(builder.tls, builder.clock), TlsProviders.preferred())));
                } else {
                    channel.usePlaintext();
                }
            }
            channels.add(channel.eventLoopGroup(loop)
                    .directExecutor()
                    .disableRetry()
                    .flowControlWindow(HTTP2_WINDOW)
                    .maxInboundMessageSize(16 * 1024 * 1024)
                    .userAgent("tenant-gateway-proxy-client")
                    .build());
            loops.add(loop);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Dials {@code host:port}; see {@link #dial(String, int, ChannelHandler)}. */
    public CompletableFuture<Channel> dial(String address, ChannelHandler handler) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("address: \"" + address
                    + "\" (expected: host:port)"));
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return dial(host, Integer.parseInt(address.substring(colon + 1)), handler);
    }

    /**
     * Dials {@code host:port} through the server. {@code handler} (typically a {@code ChannelInitializer}) is
     * added before the channel becomes active. The future completes with the active channel, or fails with a
     * {@link ProxyDialException} carrying the DIAL_RSP error ("No agent available", the agent's dial error) or
     * the dial timeout.
     */
    public CompletableFuture<Channel> dial(String host, int port, ChannelHandler handler) {
        requireNonNull(host, "host");
        requireNonNull(handler, "handler");
        int index = Math.floorMod(next.getAndIncrement(), channels.size());
        EventLoop loop = loops.get(index);
        TunnelChannel channel = new TunnelChannel(host, port);
        channel.pipeline().addLast(handler);
        CompletableFuture<Channel> result = new CompletableFuture<>();
        loop.register(channel).addListener(f -> {
            if (!f.isSuccess()) {
                result.completeExceptionally(new ProxyDialException("cannot register tunnel channel", f.cause()));
                return;
            }
            channel.start(channels.get(index), dialTimeout).whenComplete((ch, error) -> {
                if (error != null) {
                    result.completeExceptionally(error);
                } else {
                    result.complete(ch);
                }
            });
        });
        return result;
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel channel : channels) {
            try {
                channel.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (ownedGroup != null) {
            ownedGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** Where to reach the server and how. */
    public static final class Builder {
        private Path unixSocket;
        private String host;
        private int port;
        private TlsMaterial tls;
        private Clock clock = Clock.systemUTC();
        private EventLoopGroup group;
        private int connections = 1;
        private Duration dialTimeout = Duration.ofSeconds(30);

        private Builder() {
        }

        /** The server's {@code --uds-name} socket (plain gRPC, as kube-apiserver uses it). */
        public Builder unixSocket(Path value) {
            unixSocket = requireNonNull(value, "unixSocket");
            return this;
        }

        /** A TCP frontend; with {@code clientTls} (identity + CA) for mTLS, or {@code null} for plain TCP. */
        public Builder tcp(InetSocketAddress address, TlsMaterial clientTls) {
            host = address.getHostString();
            port = address.getPort();
            tls = clientTls;
            return this;
        }

        public Builder clock(Clock value) {
            clock = requireNonNull(value, "clock");
            return this;
        }

        /** Event loops from {@link Transports#newGroup}; by default the client owns its own. */
        public Builder eventLoopGroup(EventLoopGroup value) {
            group = requireNonNull(value, "eventLoopGroup");
            return this;
        }

        /** gRPC connections to spread dials over (each pinned to one event loop). */
        public Builder connections(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("connections: " + value + " (expected: >= 1)");
            }
            connections = value;
            return this;
        }

        /** The client-side backstop (upstream: 30 s); DIAL_CLS is sent when it expires. */
        public Builder dialTimeout(Duration value) {
            dialTimeout = requireNonNull(value, "dialTimeout");
            return this;
        }

        public ProxyClient build() {
            if (unixSocket == null && host == null) {
                throw new IllegalStateException("server address: not set (expected: unixSocket(...) or tcp(...))");
            }
            return new ProxyClient(this);
        }
    }
}
