package io.tenantgateway.tunnel.transport;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.CompletableFuture;

/**
 * Netty transport selection: native epoll where it loads (Linux; required for Unix domain sockets), NIO
 * elsewhere. Channel classes are chosen by the group they run on, so callers never mix the two.
 */
public final class Transports {
    private Transports() {
    }

    public static boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    /** A new event loop group of daemon threads named {@code name-N}. */
    public static EventLoopGroup newGroup(int threads, String name) {
        DefaultThreadFactory threadFactory = new DefaultThreadFactory(name, true);
        return new MultiThreadIoEventLoopGroup(threads, threadFactory,
                epollAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    public static boolean isEpoll(EventLoopGroup group) {
        return group instanceof IoEventLoopGroup io && epollAvailable() && io.isIoType(EpollIoHandler.class);
    }

    public static Class<? extends SocketChannel> socketChannel(EventLoopGroup group) {
        return isEpoll(group) ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static Class<? extends ServerSocketChannel> serverSocketChannel(EventLoopGroup group) {
        return isEpoll(group) ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends DatagramChannel> datagramChannel(EventLoopGroup group) {
        return isEpoll(group) ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }

    public static Class<? extends Channel> domainSocketChannel(EventLoopGroup group) {
        requireEpoll(group);
        return EpollDomainSocketChannel.class;
    }

    public static Class<? extends ServerChannel> serverDomainSocketChannel(EventLoopGroup group) {
        requireEpoll(group);
        return EpollServerDomainSocketChannel.class;
    }

    /**
     * The loop of {@code group} the calling thread runs, or {@code null}. Used to learn which event loop owns a
     * gRPC server call whose callbacks run directly on its transport thread.
     */
    public static EventLoop currentLoop(EventLoopGroup group) {
        requireNonNull(group, "group");
        for (EventExecutor executor : group) {
            if (executor.inEventLoop()) {
                return (EventLoop) executor;
            }
        }
        return null;
    }

    /** The channel of a connect (or bind) as a {@link CompletableFuture}, failing with Netty's cause. */
    public static CompletableFuture<Channel> whenDone(ChannelFuture future) {
        requireNonNull(future, "future");
        CompletableFuture<Channel> result = new CompletableFuture<>();
        future.addListener(done -> {
            if (done.isSuccess()) {
                result.complete(future.channel());
            } else {
                result.completeExceptionally(done.cause());
            }
        });
        return result;
    }

    private static void requireEpoll(EventLoopGroup group) {
        if (!isEpoll(group)) {
            throw new IllegalStateException("Unix domain sockets need the native epoll transport, which is not"
                    + " available here (" + Epoll.unavailabilityCause() + ")");
        }
    }
}
