package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerInterceptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * gRPC over Unix domain sockets, as kubelet speaks it: plain text, authority {@code localhost}, Netty's native epoll
 * transport ({@code EpollDomainSocketChannel}, {@code EpollServerDomainSocketChannel}). Public so that the kubelet
 * stand-in of the tests and the lab uses the same transport.
 */
public final class UnixSockets {
    /** The authority kubelet and the plugins use on their sockets. */
    public static final String AUTHORITY = "localhost";

    private UnixSockets() {
    }

    /**
     * A group of {@code threads} epoll event loops named {@code name-N} (daemon threads).
     *
     * @throws IllegalStateException where native epoll does not load (not Linux, or the natives are missing)
     */
    public static EventLoopGroup newGroup(int threads, String name) {
        if (!Epoll.isAvailable()) {
            throw new IllegalStateException("the device plugin needs Unix domain sockets, which need Netty's native"
                    + " epoll transport; it does not load here: " + Epoll.unavailabilityCause());
        }
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
                EpollIoHandler.newFactory());
    }

    /** Whether Unix domain sockets can be used here (Linux with the epoll natives). */
    public static boolean available() {
        return Epoll.isAvailable();
    }

    /** A plain-text channel to the socket at {@code socket}; callbacks run on the group's loop (direct executor). */
    public static ManagedChannel channel(Path socket, EventLoopGroup group) {
        requireNonNull(socket, "socket");
        requireNonNull(group, "group");
        return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                .channelType(EpollDomainSocketChannel.class, DomainSocketAddress.class)
                .eventLoopGroup(group)
                .usePlaintext()
                .overrideAuthority(AUTHORITY)
                .directExecutor()
                .disableRetry()
                .build();
    }

    /**
     * Starts a gRPC server on the socket at {@code socket} (which must not exist), its calls run on {@code executor}.
     *
     * @throws UncheckedIOException when the socket cannot be bound
     */
    public static Server serve(Path socket, EventLoopGroup group, Executor executor, BindableService service,
            ServerInterceptor... interceptors) {
        requireNonNull(socket, "socket");
        try {
            return NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
                    .channelType(EpollServerDomainSocketChannel.class)
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .executor(executor)
                    .addService(ServerInterceptors.intercept(service, interceptors))
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + socket + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether something accepts connections on the socket at {@code socket} right now (a plain connect, JDK only;
     * a stale socket file left by a dead process refuses it).
     *
     * @return {@code null} when it does, else why not ({@code Connection refused})
     */
    public static String connectFailure(Path socket) {
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(socket));
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
    }
}
