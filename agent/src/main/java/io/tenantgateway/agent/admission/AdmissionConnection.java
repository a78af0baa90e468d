package io.tenantgateway.agent.admission;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
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
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * The one admission-calling client: an HTTP/1.1 connection to a webhook as kube-apiserver makes it, on a channel the
 * caller opened (a tunnel through a konnectivity-server, an http-connect frontend, a direct socket). Optionally TLS
 * that verifies the Service's DNS name (the bytes go to an address; the certificate must name the Service), then
 * exchanges one at a time, the connection kept alive between them. {@code probe} (its own inspecting TLS handshake,
 * then {@link #plain}), the lab (a fresh tunnel per call) and the bench (a bounded pool of these) all call through it.
 *
 * <p>Non-blocking: every method returns a future; the I/O runs on the channel's event loop.
 */
public final class AdmissionConnection {
    static final String CODEC = "admission-http-codec";
    static final String AGGREGATOR = "admission-http-aggregator";
    static final String HANDLER = "admission-http-response";
    /** Largest answer read: an AdmissionReview response carries a patch, never a pod. */
    private static final int MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

    /**
     * The status and body of the answer.
     *
     * @param status the status code
     * @param reason the reason phrase
     * @param body the body as UTF-8
     */
    public record Response(int status, String reason, String body) {
    }

    /** The connection closed before an answer (or the handshake) completed; a {@link ClosedChannelException}. */
    public static final class ClosedBeforeAnswerException extends ClosedChannelException {
        private static final long serialVersionUID = 1L;

        @Override
        public String getMessage() {
            return "the connection closed before an answer arrived";
        }
    }

    private final Channel channel;
    private final CompletableFuture<Void> handshake = new CompletableFuture<>();
    private volatile CompletableFuture<Response> pending;

    private AdmissionConnection(Channel channel) {
        this.channel = requireNonNull(channel, "channel");
    }

    /**
     * TLS verifying {@code serverName} (SNI and host name check), then HTTP; call it from a {@code ChannelInitializer}
     * (or on the event loop of a connected channel) before any bytes flow.
     */
    public static AdmissionConnection withTls(Channel channel, SslContext tls, String serverName, int port) {
        AdmissionConnection connection = new AdmissionConnection(channel);
        SslHandler ssl = requireNonNull(tls, "tls").newHandler(channel.alloc(), requireNonNull(serverName,
                "serverName"), port);
        ssl.handshakeFuture().addListener(done -> {
            if (done.isSuccess()) {
                connection.handshake.complete(null);
            } else {
                connection.handshake.completeExceptionally(done.cause());
            }
        });
        channel.pipeline().addLast(ssl);
        connection.addHttp();
        return connection;
    }

    /** HTTP only, on a channel that already speaks TLS (probe's own handshake) or needs none (CONNECT). */
    public static AdmissionConnection plain(Channel channel) {
        AdmissionConnection connection = new AdmissionConnection(channel);
        connection.handshake.complete(null);
        connection.addHttp();
        return connection;
    }

    public Channel channel() {
        return channel;
    }

    /** Completes when TLS is up (at once for {@link #plain}); fails when the handshake or the connection does. */
    public CompletableFuture<Void> handshake() {
        return handshake;
    }

    public boolean isActive() {
        return channel.isActive();
    }

    /**
     * {@code POST path} with a JSON body (an AdmissionReview), {@code Accept: application/json}.
     *
     * @param authority the {@code Host} header
     * @param path with the query, e.g. {@code /webhook?timeout=10s} as kube-apiserver sends it
     * @param userAgent the {@code User-Agent} header, or {@code null} for none
     */
    public CompletableFuture<Response> postJson(String authority, String path, byte[] json, String userAgent) {
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path,
                Unpooled.wrappedBuffer(json));
        request.headers().set(HttpHeaderNames.HOST, authority)
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, json.length);
        if (userAgent != null) {
            request.headers().set(HttpHeaderNames.USER_AGENT, userAgent);
        }
        return send(request);
    }

    /** {@code CONNECT authority HTTP/1.1} (an http-connect frontend); after a 2xx answer call {@link #removeHttp()}. */
    public CompletableFuture<Response> connect(String authority) {
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.CONNECT, authority,
                Unpooled.EMPTY_BUFFER);
        request.headers().set(HttpHeaderNames.HOST, authority);
        return send(request);
    }

    /** Removes the HTTP handlers (after a CONNECT): bytes the decoder already holds move on to the next handlers. */
    public void removeHttp() {
        channel.pipeline().remove(HANDLER);
        channel.pipeline().remove(AGGREGATOR);
        channel.pipeline().remove(CODEC);
    }

    public ChannelFuture close() {
        return channel.close();
    }

    /** One exchange at a time: the caller waits for an answer before sending the next request. */
    private CompletableFuture<Response> send(FullHttpRequest request) {
        CompletableFuture<Response> answer = new CompletableFuture<>();
        channel.eventLoop().execute(() -> {
            if (!channel.isActive()) {
                request.release();
                answer.completeExceptionally(new ClosedBeforeAnswerException());
                return;
            }
            pending = answer;
            channel.writeAndFlush(request).addListener(f -> {
                if (!f.isSuccess()) {
                    // The peer may close before our request is even written: the same story as closing before
                    // answering.
                    fail(f.cause() instanceof ClosedChannelException ? new ClosedBeforeAnswerException() : f.cause());
                }
            });
        });
        return answer;
    }

    private void addHttp() {
        channel.pipeline().addLast(CODEC, new HttpClientCodec())
                .addLast(AGGREGATOR, new HttpObjectAggregator(MAX_RESPONSE_BYTES))
                .addLast(HANDLER, new SimpleChannelInboundHandler<FullHttpResponse>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
                        CompletableFuture<Response> answer = pending;
                        pending = null;
                        if (answer != null) {
                            answer.complete(new Response(response.status().code(), response.status().reasonPhrase(),
                                    response.content().toString(StandardCharsets.UTF_8)));
                        }
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                        fail(new ClosedBeforeAnswerException());
                        ctx.fireChannelInactive();
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        fail(cause);
                        ctx.close();
                    }
                });
    }

    private void fail(Throwable cause) {
        handshake.completeExceptionally(cause);
        CompletableFuture<Response> answer = pending;
        pending = null;
        if (answer != null) {
            answer.completeExceptionally(cause);
        }
    }
}
