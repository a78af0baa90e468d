package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
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
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Calls the webhook the way kube-apiserver calls a Service-referenced webhook: TLS that verifies the Service's DNS
 * name, HTTP/1.1 POST of an {@code admission.k8s.io/v1} AdmissionReview, kept-alive connections reused from a
 * bounded pool. The same client runs over a direct connection (baseline) and through the tunnel, where TLS and HTTP travel
 * inside DATA packets exactly as they do from a Kamaji control plane.
 *
 * <p>(The lab has a caller too, {@code lab.AdmissionCaller}; it opens a fresh gRPC connection per call and stores
 * pods in a mock API server, which is right for the lab and wrong for a rate test, so the bench has its own.)
 */
final class AdmissionClient implements AutoCloseable {
    static final String PATH = "/webhook";
    private static final int SERVICE_PORT = 443;
    private static final int MAX_RESPONSE_BYTES = 1024 * 1024;

    private final Route route;
    private final InetSocketAddress webhook;
    private final SslContext tls;
    private final int maxConnections;
    private final AtomicInteger opened = new AtomicInteger();
    // Pool state, guarded by "this" (a few hundred operations per second; no contention worth a lock-free pool).
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final ArrayDeque<CompletableFuture<Connection>> waiters = new ArrayDeque<>();
    private final List<Connection> all = new ArrayList<>();
    private int connections;

    /** @param maxConnections connections kept at most; further requests wait for one (as a bounded transport) */
    AdmissionClient(Route route, InetSocketAddress webhook, SslContext tls, int maxConnections) {
        this.route = requireNonNull(route, "route");
        this.webhook = requireNonNull(webhook, "webhook");
        this.tls = requireNonNull(tls, "tls");
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections: " + maxConnections + " (expected: >= 1)");
        }
        this.maxConnections = maxConnections;
    }

    Route route() {
        return route;
    }

    /** Connections opened so far (TLS handshakes done). */
    int opened() {
        return opened.get();
    }

    /**
     * Posts {@code review} on an idle connection (opening one while fewer than the maximum exist, else waiting for
     * one) and completes with the response body; fails unless the answer is HTTP 200.
     */
    CompletableFuture<String> post(byte[] review) {
        return acquire().thenCompose(c -> c.exchange(review).whenComplete((body, error) -> release(c, error)));
    }

    private CompletableFuture<Connection> acquire() {
        synchronized (this) {
            Connection connection;
            while ((connection = idle.pollFirst()) != null) {
                if (connection.channel.isActive()) {
                    return CompletableFuture.completedFuture(connection);
                }
                connections--;
            }
            if (connections >= maxConnections) {
                CompletableFuture<Connection> waiter = new CompletableFuture<>();
                waiters.add(waiter);
                return waiter;
            }
            connections++;
        }
        return open().whenComplete((c, error) -> {
            if (error != null) {
                synchronized (this) {
                    connections--;
                }
            }
        });
    }

    private void release(Connection connection, Throwable error) {
        CompletableFuture<Connection> waiter;
        synchronized (this) {
            if (error != null || !connection.channel.isActive()) {
                connection.channel.close();
                connections--;
                waiter = waiters.pollFirst();
                if (waiter != null) {
                    connections++; // the waiter gets a new connection instead
                }
            } else {
                waiter = waiters.pollFirst();
                if (waiter == null) {
                    idle.addFirst(connection);
                    return;
                }
            }
        }
        if (error != null || !connection.channel.isActive()) {
            if (waiter != null) {
                open().whenComplete((c, failure) -> {
                    if (failure != null) {
                        synchronized (this) {
                            connections--;
                        }
                        waiter.completeExceptionally(failure);
                    } else {
                        waiter.complete(c);
                    }
                });
            }
        } else {
            waiter.complete(connection);
        }
    }

    private CompletableFuture<Connection> open() {
        Connection connection = new Connection();
        return route.connect(webhook, connection.initializer()).thenCompose(channel -> {
            connection.channel = channel;
            synchronized (this) {
                all.add(connection);
            }
            return connection.handshake;
        }).thenApply(done -> {
            opened.incrementAndGet();
            return connection;
        });
    }

    @Override
    public void close() {
        List<Connection> toClose;
        synchronized (this) {
            toClose = new ArrayList<>(all);
            all.clear();
            idle.clear();
            waiters.forEach(w -> w.completeExceptionally(new ClosedChannelException()));
            waiters.clear();
        }
        for (Connection connection : toClose) {
            connection.channel.close().syncUninterruptibly();
        }
    }

    /** One kept-alive HTTPS connection; one exchange at a time. */
    private final class Connection {
        final CompletableFuture<Void> handshake = new CompletableFuture<>();
        volatile Channel channel;
        private volatile CompletableFuture<String> pending;

        ChannelInitializer<Channel> initializer() {
            return new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    // The bytes go to the webhook's address; the certificate must name the Service, as
                    // kube-apiserver checks.
                    SslHandler ssl = tls.newHandler(ch.alloc(), BenchPki.WEBHOOK_DNS_NAME, SERVICE_PORT);
                    ssl.handshakeFuture().addListener(f -> {
                        if (f.isSuccess()) {
                            handshake.complete(null);
                        } else {
                            handshake.completeExceptionally(f.cause());
                        }
                    });
                    ch.pipeline().addLast(ssl, new HttpClientCodec(), new HttpObjectAggregator(MAX_RESPONSE_BYTES),
                            new SimpleChannelInboundHandler<FullHttpResponse>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
                                    CompletableFuture<String> answer = pending;
                                    pending = null;
                                    if (answer == null) {
                                        return;
                                    }
                                    String body = response.content().toString(StandardCharsets.UTF_8);
                                    if (response.status().code() != 200) {
                                        answer.completeExceptionally(new IOException("webhook answered HTTP "
                                                + response.status().code() + ": " + body));
                                    } else {
                                        answer.complete(body);
                                    }
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    fail(new ClosedChannelException());
                                    ctx.fireChannelInactive();
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    fail(cause);
                                    ctx.close();
                                }
                            });
                }
            };
        }

        private void fail(Throwable cause) {
            handshake.completeExceptionally(cause);
            CompletableFuture<String> answer = pending;
            pending = null;
            if (answer != null) {
                answer.completeExceptionally(cause);
            }
        }

        CompletableFuture<String> exchange(byte[] review) {
            CompletableFuture<String> answer = new CompletableFuture<>();
            FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                    PATH + "?timeout=10s", Unpooled.wrappedBuffer(review));
            request.headers().set(HttpHeaderNames.HOST, BenchPki.WEBHOOK_DNS_NAME + ":" + SERVICE_PORT)
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                    .set(HttpHeaderNames.CONTENT_LENGTH, review.length)
                    .set(HttpHeaderNames.USER_AGENT, "tenant-gateway-bench (kube-apiserver admission)");
            channel.eventLoop().execute(() -> {
                pending = answer;
                channel.writeAndFlush(request).addListener(f -> {
                    if (!f.isSuccess()) {
                        fail(f.cause());
                    }
                });
            });
            return answer;
        }
    }
}
