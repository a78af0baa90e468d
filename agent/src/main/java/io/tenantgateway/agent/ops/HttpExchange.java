package io.tenantgateway.agent.ops;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * One HTTP/1.1 request and its response on an existing channel (a tunnel, or the connection to an http-connect
 * frontend). The codec handlers are named so that a CONNECT exchange can remove them and hand the raw bytes on.
 */
final class HttpExchange {
    static final String CODEC = "probe-http-codec";
    static final String AGGREGATOR = "probe-http-aggregator";
    static final String HANDLER = "probe-http-response";
    /** Largest answer read: an AdmissionReview response carries a patch, never a pod. */
    private static final int MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
    private static final String CLOSED = "the connection closed before an answer arrived";

    /**
     * The status and body of the answer.
     *
     * @param status the status code
     * @param reason the reason phrase
     * @param body the body as UTF-8
     */
    record Response(int status, String reason, String body) {
    }

    private HttpExchange() {
    }

    /** {@code CONNECT authority HTTP/1.1}; after a 2xx answer call {@link #removeCodec(Channel)}. */
    static CompletableFuture<Response> connect(Channel channel, String authority) {
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.CONNECT, authority,
                Unpooled.EMPTY_BUFFER);
        request.headers().set(HttpHeaderNames.HOST, authority);
        return send(channel, request);
    }

    /** {@code POST path} with a JSON body. */
    static CompletableFuture<Response> postJson(Channel channel, String host, String path, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path,
                Unpooled.wrappedBuffer(body));
        request.headers().set(HttpHeaderNames.HOST, host)
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return send(channel, request);
    }

    private static CompletableFuture<Response> send(Channel channel, FullHttpRequest request) {
        CompletableFuture<Response> result = new CompletableFuture<>();
        channel.pipeline().addLast(CODEC, new HttpClientCodec())
                .addLast(AGGREGATOR, new HttpObjectAggregator(MAX_RESPONSE_BYTES))
                .addLast(HANDLER, new SimpleChannelInboundHandler<FullHttpResponse>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
                        result.complete(new Response(response.status().code(), response.status().reasonPhrase(),
                                response.content().toString(StandardCharsets.UTF_8)));
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                        result.completeExceptionally(new IllegalStateException(CLOSED));
                        ctx.fireChannelInactive();
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        result.completeExceptionally(cause);
                        ctx.close();
                    }
                });
        channel.writeAndFlush(request).addListener(f -> {
            if (!f.isSuccess()) {
                // The peer may close before our request is even written: the same story as closing before answering.
                result.completeExceptionally(f.cause() instanceof ClosedChannelException
                        ? new IllegalStateException(CLOSED) : f.cause());
            }
        });
        return result;
    }

    /** Removes the codec after a CONNECT: bytes the decoder already holds move on to the next handlers. */
    static void removeCodec(Channel channel) {
        channel.pipeline().remove(HANDLER);
        channel.pipeline().remove(AGGREGATOR);
        channel.pipeline().remove(CODEC);
    }
}
