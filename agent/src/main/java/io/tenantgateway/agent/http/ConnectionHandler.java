package io.tenantgateway.agent.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
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
 * deadline runs from the connection opening, and from each response, to the request's last byte.
 *
 * <p>Threading: one instance per connection, confined to its event loop (the response's write listener runs there
 * too).
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);

    private enum State { IDLE, RECEIVING, DISCARDING, RESPONDING }

    private final HttpEndpoint endpoint;
    private State state = State.IDLE;
    private HttpRequest request;
    private long bodyBytes;
    private ScheduledFuture<?> deadline;

    ConnectionHandler(HttpEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        awaitNextRequest(ctx);
        ctx.fireChannelActive();
    }

    private void awaitNextRequest(ChannelHandlerContext ctx) {
        cancelDeadline();
        state = State.IDLE;
        request = null;
        bodyBytes = 0;
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
            if (state == State.RECEIVING) {
                ctx.read(); // the rest of this request
            }
        } finally {
            ReferenceCountUtil.release(message);
        }
    }

    private void started(ChannelHandlerContext ctx, HttpRequest head) {
        if (state != State.IDLE) {
            return; // cannot happen: the next request is read only once the response was written
        }
        DecoderResult result = head.decoderResult();
        if (result.isFailure()) {
            Throwable cause = result.cause();
            HttpResponseStatus status = cause instanceof TooLongHttpLineException
                    ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                    : cause instanceof TooLongHttpHeaderException ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : HttpResponseStatus.BAD_REQUEST;
            log.debug("{}: bad request from {}: {}", endpoint.name(), ctx.channel().remoteAddress(), cause.toString());
            refuse(ctx, status, status.reasonPhrase() + "\n");
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
        if (state == State.DISCARDING || state == State.IDLE) {
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
        cancelDeadline();
        HttpRequest head = request;
        boolean keepAlive = HttpUtil.isKeepAlive(head);
        Response response = new Response(ctx.channel(), head.protocolVersion(), keepAlive,
                HttpMethod.HEAD.equals(head.method()), done -> written(ctx, done, keepAlive));
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
        } else if (ctx.channel().isActive()) {
            awaitNextRequest(ctx);
        }
    }

    /** Answers {@code status} and closes: the rest of this connection's bytes cannot be trusted to frame a request. */
    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String body) {
        state = State.DISCARDING;
        cancelDeadline();
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
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
