package io.tenantgateway.tunnel.endpoint;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * Turns a target channel's events into calls on its {@link RelayListener}. Runs on the channel's event loop,
 * which is also the loop that owns the tunnel stream, so the listener needs no synchronisation.
 */
public final class EndpointRelayHandler extends ChannelInboundHandlerAdapter {
    private final RelayListener listener;

    public EndpointRelayHandler(RelayListener listener) {
        this.listener = requireNonNull(listener, "listener");
    }

    /** What a relay endpoint (agent target, HTTP-CONNECT client) reports. All calls happen on its event loop. */
    public interface RelayListener {
        /** Bytes read from the channel; the listener owns (and must release) {@code data}. */
        void onRead(ByteBuf data);

        /** A read requested with {@code channel.read()} finished (with or without data). */
        void onReadComplete();

        void onWritabilityChanged(boolean writable);

        /** The channel closed; {@code cause} is the error that closed it, or {@code null} for an orderly close. */
        void onClosed(Throwable cause);
    }

    private Throwable failure;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf data) {
            listener.onRead(data);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        listener.onReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        listener.onWritabilityChanged(ctx.channel().isWritable());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        listener.onClosed(failure);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        ctx.close();
    }
}
