package io.tenantgateway.agent.ops;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Sends the HTTP/2 client preface and an empty SETTINGS frame and reads the server's first bytes: a gRPC server
 * answers with its SETTINGS frame. Anything else says what is there instead (an HTTP/1.1 server — an http-connect
 * frontend — or a TLS alert such as a refused client certificate, which TLS 1.3 sends only after the client's side of
 * the handshake is done).
 *
 * <p>Add it to the pipeline together with the {@code SslHandler} (see {@link TlsHandshakes#handshake}): it writes
 * once the handshake completes, and it is already in place when an alert arrives right after.
 */
final class Http2Preface extends ChannelInboundHandlerAdapter {
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** An empty SETTINGS frame: length 0, type 0x4, flags 0, stream 0. */
    private static final byte[] EMPTY_SETTINGS = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    private static final int FRAME_TYPE_SETTINGS = 4;

    private final boolean afterTls;
    private final CompletableFuture<String> result = new CompletableFuture<>();

    /** @param afterTls write after the TLS handshake completes; otherwise as soon as the handler is added */
    Http2Preface(boolean afterTls) {
        this.afterTls = afterTls;
    }

    /** Completes with a short description of the server's answer, or fails with why it is not a gRPC server. */
    CompletableFuture<String> result() {
        return result;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (!afterTls && ctx.channel().isActive()) {
            write(ctx);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof SslHandshakeCompletionEvent completion && completion.isSuccess()) {
            write(ctx);
        }
        ctx.fireUserEventTriggered(event);
    }

    private void write(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Unpooled.wrappedBuffer(PREFACE, EMPTY_SETTINGS)).addListener(f -> {
            // A closed channel is reported by the read side, with the reason (a TLS alert) when there is one.
            if (!f.isSuccess() && !(f.cause() instanceof ClosedChannelException)) {
                result.completeExceptionally(f.cause());
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        try {
            if (message instanceof ByteBuf data && data.readableBytes() >= 4) {
                if (data.getUnsignedByte(data.readerIndex() + 3) == FRAME_TYPE_SETTINGS) {
                    result.complete("HTTP/2 SETTINGS received");
                } else if (data.toString(data.readerIndex(), 4, StandardCharsets.US_ASCII).equals("HTTP")) {
                    result.completeExceptionally(new IllegalStateException("the server answered HTTP/1.1, not"
                            + " HTTP/2: it runs --mode http-connect (probe with --mode http-connect)"));
                } else {
                    result.completeExceptionally(new IllegalStateException("the server did not answer the HTTP/2"
                            + " preface with SETTINGS: not a gRPC (ProxyService) frontend"));
                }
            }
        } finally {
            ReferenceCountUtil.release(message);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        result.completeExceptionally(cause);
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        result.completeExceptionally(new IllegalStateException("the server closed the connection after the HTTP/2"
                + " preface"));
        ctx.fireChannelInactive();
    }
}
