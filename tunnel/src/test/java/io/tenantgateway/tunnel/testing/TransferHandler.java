package io.tenantgateway.tunnel.testing;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends {@code sendBytes} of a seeded payload as fast as the channel's writability allows, and hashes what it
 * receives until {@code expectBytes} arrived. Works on sockets and tunnel channels alike.
 */
public final class TransferHandler extends ChannelInboundHandlerAdapter {
    private static final int CHUNK = 64 * 1024;

    private final Payload payload;
    private final long sendBytes;
    private final long expectBytes;
    private final MessageDigest sent = Payload.newDigest();
    private final MessageDigest received = Payload.newDigest();
    private final AtomicLong receivedBytes = new AtomicLong();
    private final AtomicLong sentBytes = new AtomicLong();
    private final CompletableFuture<Result> done = new CompletableFuture<>();
    private long remaining;
    private Channel channel;

    public record Result(String sentSha256, String receivedSha256, long receivedBytes) {
    }

    public TransferHandler(long seed, long sendBytes, long expectBytes) {
        this.payload = new Payload(seed);
        this.sendBytes = sendBytes;
        this.remaining = sendBytes;
        this.expectBytes = expectBytes;
    }

    public CompletableFuture<Result> done() {
        return done;
    }

    public long receivedBytes() {
        return receivedBytes.get();
    }

    public long sentBytes() {
        return sentBytes.get();
    }

    public Channel channel() {
        return channel;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        writeMore(ctx);
        ctx.fireChannelActive();
        if (expectBytes == 0 && remaining == 0) {
            complete();
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (ctx.channel().isActive()) {
            writeMore(ctx);
        }
    }

    private void writeMore(ChannelHandlerContext ctx) {
        boolean wrote = false;
        while (remaining > 0 && ctx.channel().isWritable()) {
            int size = (int) Math.min(CHUNK, remaining);
            ByteBuf buf = ctx.alloc().buffer(size);
            payload.fill(buf, size);
            sent.update(buf.nioBuffer());
            remaining -= size;
            sentBytes.addAndGet(size);
            ctx.write(buf);
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
        if (remaining == 0 && receivedBytes.get() >= expectBytes) {
            complete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            writeMore(ctx);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            ByteBuf buf = (ByteBuf) msg;
            received.update(buf.nioBuffer());
            receivedBytes.addAndGet(buf.readableBytes());
        } finally {
            ReferenceCountUtil.release(msg);
        }
        if (remaining == 0 && receivedBytes.get() >= expectBytes) {
            complete();
        }
    }

    private void complete() {
        if (!done.isDone()) {
            done.complete(new Result(Payload.hex(sent), Payload.hex(received), receivedBytes.get()));
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        done.completeExceptionally(new IOException("channel closed after sending " + (sendBytes - remaining)
                + "/" + sendBytes + " and receiving " + receivedBytes.get() + "/" + expectBytes + " bytes"));
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        done.completeExceptionally(cause);
        ctx.close();
    }
}
