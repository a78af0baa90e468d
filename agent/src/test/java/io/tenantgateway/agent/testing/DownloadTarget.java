package io.tenantgateway.agent.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.transport.Transports;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A loopback download server: a client sends an 8-byte seed, the server streams {@code size} deterministic
 * pseudo-random bytes for that seed (xorshift64*, respecting channel writability) and then closes the connection.
 * {@link Download} is the matching client handler that hashes what it receives.
 */
public final class DownloadTarget implements AutoCloseable {
    private static final int CHUNK = 64 * 1024;

    private final EventLoopGroup group;
    private final Channel server;
    private final long size;

    public DownloadTarget(long size, int threads) {
        this.size = size;
        group = Transports.newGroup(threads, "download-target");
        server = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new Sender());
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).syncUninterruptibly().channel();
    }

    public String hostPort() {
        return "127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** SHA-256 (hex) of the {@code size} bytes streamed for {@code seed}. */
    public static String sha256(long seed, long size) {
        MessageDigest digest = newDigest();
        Stream stream = new Stream(seed);
        byte[] chunk = new byte[CHUNK];
        for (long left = size; left > 0; left -= CHUNK) {
            int n = (int) Math.min(CHUNK, left);
            stream.next(chunk, n);
            digest.update(chunk, 0, n);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** xorshift64* in 8-byte steps; {@code next} always consumes whole longs, so chunk sizes must be multiples of 8. */
    static final class Stream {
        private long state;
        private final ByteBuffer longs = ByteBuffer.allocate(CHUNK);

        Stream(long seed) {
            state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
        }

        void next(byte[] out, int length) {
            longs.clear();
            for (int i = 0; i < (length + 7) / 8; i++) {
                long x = state;
                x ^= x >>> 12;
                x ^= x << 25;
                x ^= x >>> 27;
                state = x;
                longs.putLong(x * 0x2545F4914F6CDD1DL);
            }
            System.arraycopy(longs.array(), 0, out, 0, length);
        }
    }

    private final class Sender extends ChannelInboundHandlerAdapter {
        private final byte[] chunk = new byte[CHUNK];
        private Stream stream;
        private ByteBuf seed;
        private long left = size;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                if (stream != null) {
                    return; // nothing else is expected
                }
                if (seed == null) {
                    seed = ctx.alloc().buffer(8);
                }
                seed.writeBytes(in, Math.min(in.readableBytes(), seed.writableBytes()));
                if (!seed.isWritable()) {
                    stream = new Stream(seed.readLong());
                    seed.release();
                    seed = null;
                    send(ctx);
                }
            } finally {
                in.release();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            send(ctx);
        }

        private void send(ChannelHandlerContext ctx) {
            if (stream == null) {
                return;
            }
            while (left > 0 && ctx.channel().isWritable()) {
                int n = (int) Math.min(CHUNK, left);
                stream.next(chunk, n);
                left -= n;
                ctx.write(ctx.alloc().buffer(n).writeBytes(chunk, 0, n));
            }
            if (left == 0) {
                left = -1;
                ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.flush();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (seed != null) {
                seed.release();
                seed = null;
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Client side of one download: sends the seed when active, hashes what arrives, completes on close. */
    public static final class Download extends ChannelInboundHandlerAdapter {
        public record Result(long seed, long bytes, String sha256) {
        }

        private final long seed;
        private final MessageDigest digest = newDigest();
        private final CompletableFuture<Result> done = new CompletableFuture<>();
        private long bytes;

        public Download(long seed) {
            this.seed = seed;
        }

        public CompletableFuture<Result> done() {
            return done;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(ctx.alloc().buffer(8).writeLong(seed));
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                bytes += in.readableBytes();
                digest.update(in.nioBuffer());
            } finally {
                in.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.complete(new Result(seed, bytes, HexFormat.of().formatHex(digest.digest())));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
