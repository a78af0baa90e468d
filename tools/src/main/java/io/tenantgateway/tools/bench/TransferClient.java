package io.tenantgateway.tools.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * The client end of one transfer with a {@link LoopbackTarget#transfer} target: sends the header, then {@code up}
 * payload bytes as fast as the channel's writability allows, while receiving {@code down} bytes and the target's
 * trailer. Works on a socket and on a tunnel channel alike. Confined to the channel's event loop except for the
 * counters and {@link #start()}.
 */
final class TransferClient extends ChannelInboundHandlerAdapter {
    private final long up;
    private final long down;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private Channel channel;
    private boolean started;
    private long upRemaining;
    private volatile long sent;
    private volatile long received;

    /** @param up bytes to send; {@link Long#MAX_VALUE} sends until closed (a writer that never finishes) */
    TransferClient(long up, long down) {
        this.up = up;
        this.down = down;
        this.upRemaining = up;
    }

    /** Completes when everything was sent, received, and the target confirmed it got all of it. */
    CompletableFuture<Void> done() {
        return done;
    }

    long sent() {
        return sent;
    }

    long received() {
        return received;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    /** Sends the header and starts the upload; the target starts its download when the header arrives. */
    void start() {
        channel.eventLoop().execute(() -> {
            ByteBuf header = channel.alloc().buffer(LoopbackTarget.HEADER_BYTES);
            header.writeLong(down).writeLong(up);
            channel.write(header);
            started = true;
            writeMore();
        });
    }

    private void writeMore() {
        boolean wrote = false;
        while (upRemaining > 0 && channel.isWritable()) {
            int size = (int) Math.min(Payload.CHUNK, upRemaining);
            upRemaining -= size;
            channel.write(Payload.slice(size));
            sent += size;
            wrote = true;
        }
        if (wrote || upRemaining == up) {
            channel.flush();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf data = (ByteBuf) msg;
        try {
            long total = received + data.readableBytes();
            if (total > down + 1) {
                done.completeExceptionally(new IOException("received " + total + " bytes (expected: " + down
                        + " and one trailer byte)"));
                ctx.close();
                return;
            }
            if (total == down + 1) {
                byte last = data.getByte(data.writerIndex() - 1);
                received = down;
                if (last != LoopbackTarget.TRAILER) {
                    done.completeExceptionally(new IOException("last byte " + last + " (expected: the trailer)"));
                } else if (upRemaining > 0) {
                    done.completeExceptionally(new IOException("trailer before the upload ended"));
                } else {
                    done.complete(null);
                }
                return;
            }
            received = total;
        } finally {
            data.release();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (started && ctx.channel().isWritable()) {
            writeMore();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        done.completeExceptionally(new IOException("connection closed after sending " + sent + "/" + up
                + " and receiving " + received + "/" + down + " bytes"));
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        done.completeExceptionally(cause);
        ctx.close();
    }
}
