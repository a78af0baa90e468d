package io.tenantgateway.agent.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of an {@link HttpEndpoint}: reads one request at a time ({@code AUTO_READ} off; the
 * {@code FlowControlHandler} before it holds what one socket read decoded beyond that), discards its body, calls the
 * handler once the request is complete, and reads the next only after the response was written. The request
 * deadline runs from the connection opening, and from each response, to the request's last byte; a new connection
 * must send its first byte within the endpoint's first-byte timeout. It keeps its {@link ConnectionSlots.Slot}'s
 * state current (idle, receiving, responding), which decides whether a new connection may displace it; a request
 * framed ambiguously ({@link RequestDecoder#framingProblem}) is answered 400 and the connection closed. At most
 * {@value #MAX_PIPELINED} pipelined requests wait decoded; past that the rest of what the client sent is dropped
 * and the connection closes once the waiting ones are answered (the client retries them, RFC 9112 9.3.2).
 *
 * <p>Threading: one instance per connection, confined to its event loop (the response's write listener runs there
 * too).
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);

    /** Decoded requests that may wait for their turn; a client pipelining more is cut (see the class comment). */
    static final int MAX_PIPELINED = 16;

    /**
     * After a refusal the response is sent, the output shut (FIN), and what the client still sends is read and
     * dropped for this long before the close: closing with its bytes unread would reset the connection, and a reset
     * can destroy the refusal before the client reads it (RFC 9112 9.6).
     */
    static final long LINGER_MILLIS = 1000;

    private enum State { IDLE, RECEIVING, DISCARDING, LINGERING, RESPONDING }

    private final HttpEndpoint endpoint;
    private final ConnectionSlots.Slot slot;
    private State state = State.IDLE;
    private HttpRequest request;
    private long bodyBytes;
    private ScheduledFuture<?> deadline;
    private ScheduledFuture<?> firstByte;
    private boolean bytesSeen;
    /** Request heads decoded but not yet taken by this handler (they wait in the flow-control queue). */
    private int waiting;
    /** More than {@link #MAX_PIPELINED} were decoded: the rest was dropped; close once the waiting ones are answered. */
    private boolean overflowed;
    /** Requests handed to the handler so far: tells a late "sending" signal from the current request's. */
    private long dispatched;

    ConnectionHandler(HttpEndpoint endpoint, ConnectionSlots.Slot slot) {
        this.endpoint = endpoint;
        this.slot = slot;
    }

    /** First in the pipeline: sees the raw bytes arrive (the codec holds partial requests, so this handler cannot). */
    ChannelInboundHandlerAdapter bytesIn() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object message) {
                if (!bytesSeen) {
                    bytesSeen = true;
                    if (firstByte != null) {
                        firstByte.cancel(false);
                        firstByte = null;
                    }
                }
                if (slot.state() == ConnectionSlots.State.IDLE) {
                    endpoint.slotState(slot, ConnectionSlots.State.RECEIVING);
                }
                ctx.fireChannelRead(message);
            }
        };
    }

    /** Between the codec and the flow-control queue: counts the requests waiting, drops what exceeds the limit. */
    ChannelInboundHandlerAdapter pipelineLimit() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object message) {
                if (!overflowed && message instanceof HttpRequest && waiting >= MAX_PIPELINED) {
                    overflowed = true;
                    endpoint.pipelineOverflow(ctx.channel());
                }
                if (overflowed) {
                    ReferenceCountUtil.release(message);
                    return;
                }
                if (message instanceof HttpRequest) {
                    waiting++;
                }
                ctx.fireChannelRead(message);
            }
        };
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        long millis = endpoint.firstByteTimeout().toMillis();
        firstByte = ctx.executor().schedule(() -> {
            firstByte = null;
            if (!bytesSeen && ctx.channel().isActive()) {
                endpoint.firstByteTimedOut(ctx.channel());
                HttpEndpoint.abort(ctx.channel());
            }
        }, millis, TimeUnit.MILLISECONDS);
        awaitNextRequest(ctx);
        ctx.fireChannelActive();
    }

    private void awaitNextRequest(ChannelHandlerContext ctx) {
        cancelDeadline();
        state = State.IDLE;
        request = null;
        bodyBytes = 0;
        endpoint.slotState(slot, ConnectionSlots.State.IDLE);
        long millis = endpoint.limits().requestTimeout().toMillis();
        deadline = ctx.executor().schedule(() -> {
            deadline = null;
            if (state != State.RESPONDING && ctx.channel().isActive()) {
                endpoint.timedOut(ctx.channel(), state != State.IDLE);
                ctx.close();
            }
        }, millis, TimeUnit.MILLISECONDS);
        ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        try {
            if (message instanceof HttpRequest head) {
                started(ctx, head);
            }
            if (message instanceof HttpContent content) {
                content(ctx, content);
            }
            if (state == State.RECEIVING || state == State.LINGERING) {
                ctx.read(); // the rest of this request, or what a refused client still sends (discarded)
            }
        } finally {
            ReferenceCountUtil.release(message);
        }
    }

    private void started(ChannelHandlerContext ctx, HttpRequest head) {
        waiting--;
        if (state != State.IDLE) {
            return; // cannot happen: the next request is read only once the response was written
        }
        endpoint.slotState(slot, ConnectionSlots.State.RECEIVING);
        DecoderResult result = head.decoderResult();
        if (result.isFailure()) {
            Throwable cause = result.cause();
            HttpResponseStatus status = cause instanceof TooLongHttpLineException
                    ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                    : cause instanceof TooLongHttpHeaderException ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : HttpResponseStatus.BAD_REQUEST;
            log.debug("{}: bad request from {}: {}", endpoint.name(), ctx.channel().remoteAddress(), cause.toString());
            refuse(ctx, status, status.reasonPhrase() + ": " + cause.getMessage() + "\n");
            return;
        }
        String framing = RequestDecoder.framingProblem(head);
        if (framing != null) {
            log.debug("{}: bad request from {}: {}", endpoint.name(), ctx.channel().remoteAddress(), framing);
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, "Bad Request: " + framing + "\n");
            return;
        }
        request = head;
        state = State.RECEIVING;
        long declared = HttpUtil.getContentLength(head, -1L);
        if (declared > HttpEndpoint.MAX_BODY) {
            refuse(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body of " + declared
                    + " bytes (expected: at most " + HttpEndpoint.MAX_BODY + ")\n");
        }
    }

    private void content(ChannelHandlerContext ctx, HttpContent content) {
        if (state == State.DISCARDING || state == State.LINGERING || state == State.IDLE) {
            return; // after a refusal (the connection is closing), or content without a request
        }
        if (content.decoderResult().isFailure()) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, "Bad Request\n");
            return;
        }
        bodyBytes += content.content().readableBytes();
        if (bodyBytes > HttpEndpoint.MAX_BODY) {
            refuse(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body over "
                    + HttpEndpoint.MAX_BODY + " bytes\n");
            return;
        }
        if (content instanceof LastHttpContent) {
            dispatch(ctx);
        }
    }

    private void dispatch(ChannelHandlerContext ctx) {
        state = State.RESPONDING;
        endpoint.slotState(slot, ConnectionSlots.State.RESPONDING);
        cancelDeadline();
        HttpRequest head = request;
        boolean keepAlive = HttpUtil.isKeepAlive(head);
        long id = ++dispatched;
        Runnable sending = () -> ctx.executor().execute(() -> {
            if (state == State.RESPONDING && dispatched == id) {
                endpoint.slotState(slot, ConnectionSlots.State.SENDING); // now waiting on the client to read
            }
        });
        Response response = new Response(ctx.channel(), head.protocolVersion(), keepAlive,
                HttpMethod.HEAD.equals(head.method()), sending, endpoint.responses(),
                done -> written(ctx, done, keepAlive));
        Request parsed;
        try {
            parsed = Request.of(head);
        } catch (IllegalArgumentException e) {
            response.status(400).header("content-type", "text/plain; charset=utf-8").end(e.getMessage() + "\n");
            return;
        }
        try {
            endpoint.handler().handle(parsed, response);
        } catch (RuntimeException e) {
            log.warn("{}: {} {} failed: {}", endpoint.name(), parsed.method(), parsed.path(), e.toString(), e);
            if (!response.ended()) {
                response.status(500).header("content-type", "text/plain; charset=utf-8")
                        .end("internal error: " + e + "\n");
            }
        }
    }

    /** On the loop once a response was written: the next request, or the end of the connection. */
    private void written(ChannelHandlerContext ctx, ChannelFuture done, boolean keepAlive) {
        if (!done.isSuccess()) {
            log.debug("{}: response to {} not sent: {}", endpoint.name(), ctx.channel().remoteAddress(),
                    String.valueOf(done.cause()));
            ctx.close();
        } else if (!keepAlive) {
            ctx.close();
        } else if (overflowed && waiting == 0) {
            lingeringClose(ctx, done);
        } else if (ctx.channel().isActive()) {
            awaitNextRequest(ctx);
        }
    }

    /** Answers {@code status} and closes: the rest of this connection's bytes cannot be trusted to frame a request. */
    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String body) {
        state = State.DISCARDING;
        endpoint.slotState(slot, ConnectionSlots.State.RECEIVING); // a new connection may displace it
        cancelDeadline();
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        ctx.writeAndFlush(response).addListener((ChannelFuture done) -> lingeringClose(ctx, done));
    }

    /**
     * Closes after {@code done} was written: shuts the output (the client reads what was sent, then EOF), reads and
     * drops what the client still sends for {@link #LINGER_MILLIS}, then closes.
     */
    private void lingeringClose(ChannelHandlerContext ctx, ChannelFuture done) {
        if (!done.isSuccess() || !(ctx.channel() instanceof DuplexChannel duplex) || !duplex.isActive()) {
            ctx.close();
            return;
        }
        state = State.LINGERING;
        endpoint.slotState(slot, ConnectionSlots.State.RECEIVING);
        duplex.shutdownOutput();
        ctx.executor().schedule(() -> ctx.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
        ctx.read();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            log.debug("{}: connection from {} idle for {} ms; closing it", endpoint.name(),
                    ctx.channel().remoteAddress(), endpoint.limits().idleTimeout().toMillis());
            ctx.close();
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelDeadline();
        if (firstByte != null) {
            firstByte.cancel(false);
            firstByte = null;
        }
        endpoint.closed(slot);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Peers resetting connections is expected: DEBUG, and close.
        log.debug("{}: connection from {} failed: {}", endpoint.name(), ctx.channel().remoteAddress(),
                cause.toString());
        ctx.close();
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }
}
