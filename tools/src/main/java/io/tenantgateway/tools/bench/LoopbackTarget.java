package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A target server on {@code 127.0.0.1:0}, the "remote" end every tunnel and every direct baseline connection
 * reaches. Four kinds:
 * <ul>
 *   <li>{@link #transfer}: reads a 16-byte header {@code [down: long][up: long]}, then sends {@code down} payload
 *       bytes while counting (and discarding) {@code up} bytes; once both are done it sends one trailer byte, so
 *       the client knows the target got everything;</li>
 *   <li>{@link #echo}: writes back what it reads;</li>
 *   <li>{@link #idle}: accepts and holds the connection;</li>
 *   <li>{@link #stalled}: accepts and never reads (a stuck application).</li>
 * </ul>
 * Payload byte counters (headers and trailers excluded) let the bench check that every byte arrived.
 */
final class LoopbackTarget implements AutoCloseable {
    static final int HEADER_BYTES = 16;
    static final byte TRAILER = 0x2a;

    private final Channel server;
    private final ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();

    private LoopbackTarget(EventLoopGroup group, boolean autoRead, Supplier<ChannelHandler> handler) {
        requireNonNull(group, "group");
        server = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
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

    static LoopbackTarget transfer(EventLoopGroup group) {
        LoopbackTarget[] self = new LoopbackTarget[1];
        self[0] = new LoopbackTarget(group, true, () -> self[0].new TransferHandler());
        return self[0];
    }

    static LoopbackTarget echo(EventLoopGroup group) {
        return new LoopbackTarget(group, true, EchoHandler::new);
    }

    static LoopbackTarget idle(EventLoopGroup group) {
        return new LoopbackTarget(group, true, DiscardHandler::new);
    }

    static LoopbackTarget stalled(EventLoopGroup group) {
        return new LoopbackTarget(group, false, DiscardHandler::new);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.localAddress();
    }

    String hostPort() {
        return "127.0.0.1:" + address().getPort();
    }

    /** Payload bytes received from clients so far. */
    long received() {
        return received.get();
    }

    /** Payload bytes sent to clients so far. */
    long sent() {
        return sent.get();
    }

    long accepted() {
        return accepted.get();
    }

    int openConnections() {
        return children.size();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        children.close().syncUninterruptibly();
    }

    /** One transfer connection; confined to its event loop. */
    private final class TransferHandler extends ChannelInboundHandlerAdapter {
        private final ByteBuf header = Unpooled.buffer(HEADER_BYTES, HEADER_BYTES);
        private boolean started;
        private long downRemaining;
        private long upRemaining;
        private boolean trailerSent;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf data = (ByteBuf) msg;
            try {
                if (!started) {
                    header.writeBytes(data, Math.min(header.writableBytes(), data.readableBytes()));
                    if (header.isWritable()) {
                        return;
                    }
                    downRemaining = header.readLong();
                    upRemaining = header.readLong();
                    started = true;
                    writeMore(ctx);
                }
                int size = data.readableBytes();
                if (size > 0) {
                    upRemaining -= size;
                    received.addAndGet(size);
                }
            } finally {
                data.release();
            }
            maybeFinish(ctx);
        }

        private void writeMore(ChannelHandlerContext ctx) {
            boolean wrote = false;
            while (downRemaining > 0 && ctx.channel().isWritable()) {
                int size = (int) Math.min(Payload.CHUNK, downRemaining);
                downRemaining -= size;
                ctx.write(Payload.slice(size));
                sent.addAndGet(size);
                wrote = true;
            }
            if (wrote) {
                ctx.flush();
            }
            maybeFinish(ctx);
        }

        private void maybeFinish(ChannelHandlerContext ctx) {
            if (started && !trailerSent && downRemaining == 0 && upRemaining <= 0) {
                trailerSent = true;
                ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {TRAILER}));
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (started && ctx.channel().isWritable()) {
                writeMore(ctx);
            }
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            header.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // the client side reports the broken transfer
        }
    }

    /** Writes back what it reads (the dial scenario sends one byte). */
    private static final class EchoHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static final class DiscardHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
