package io.tenantgateway.tunnel.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Loopback TCP targets for tests: an echo server (with backpressure), or a sink that hashes what it gets and can
 * stop reading on command. Port 0; {@link #address()} tells the bound port.
 */
public final class TargetServer implements AutoCloseable {
    private final EventLoopGroup group;
    private final Channel server;
    private final ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final List<Sink> sinks = new CopyOnWriteArrayList<>();
    private final AtomicLong accepted = new AtomicLong();

    private TargetServer(Supplier<io.netty.channel.ChannelHandler> handler, boolean autoRead) {
        group = Transports.newGroup(1, "target");
        server = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.AUTO_READ, autoRead)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        accepted.incrementAndGet();
                        children.add(ch);
                        ch.pipeline().addLast(handler.get());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    /** Echoes everything back, pausing reads while its own writes back up. */
    public static TargetServer echo() {
        return new TargetServer(EchoHandler::new, true);
    }

    /**
     * Hashes everything it receives and optionally sends {@code sendBytes} of payload {@code seed}; starts with
     * reading {@code reading} (use {@link Sink#setReading}).
     */
    public static TargetServer sink(boolean reading, long seed, long sendBytes) {
        TargetServer[] self = new TargetServer[1];
        TargetServer server = new TargetServer(() -> {
            Sink sink = new Sink(seed, sendBytes);
            self[0].sinks.add(sink);
            return sink;
        }, reading);
        self[0] = server;
        return server;
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    public String hostPort() {
        return "127.0.0.1:" + address().getPort();
    }

    public List<Sink> sinks() {
        return sinks;
    }

    public long accepted() {
        return accepted.get();
    }

    /** Connections currently open on the target side. */
    public int openConnections() {
        return children.size();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        children.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static final class EchoHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
            if (!ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(false);
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(true);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** One accepted connection of a sink target. */
    public static final class Sink extends ChannelInboundHandlerAdapter {
        private final MessageDigest digest = Payload.newDigest();
        private final AtomicLong received = new AtomicLong();
        private final TransferHandler sender;
        private volatile Channel channel;

        Sink(long seed, long sendBytes) {
            this.sender = sendBytes > 0 ? new TransferHandler(seed, sendBytes, 0) : null;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            if (sender != null) {
                ctx.pipeline().addLast(sender);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                synchronized (digest) {
                    digest.update(buf.nioBuffer());
                }
                received.addAndGet(buf.readableBytes());
            } finally {
                buf.release();
            }
        }

        public long received() {
            return received.get();
        }

        public String sha256() {
            synchronized (digest) {
                try {
                    return Payload.hex((MessageDigest) digest.clone());
                } catch (CloneNotSupportedException e) {
                    throw new IllegalStateException(e);
                }
            }
        }

        public TransferHandler sender() {
            return sender;
        }

        public void setReading(boolean reading) {
            channel.config().setAutoRead(reading);
        }

        public Channel channel() {
            return channel;
        }
    }
}
