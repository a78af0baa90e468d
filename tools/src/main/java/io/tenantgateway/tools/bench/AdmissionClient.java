package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.agent.admission.AdmissionConnection;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
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
 * <p>Each connection is the runtime's {@link AdmissionConnection}, as probe's and the lab's calls are; what is the
 * bench's own is the pool (the lab opens a fresh gRPC connection per call, which is right for the lab and wrong for
 * a rate test).
 */
final class AdmissionClient implements AutoCloseable {
    static final String PATH = "/webhook";
    private static final int SERVICE_PORT = 443;

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
        volatile Channel channel;
        private volatile AdmissionConnection http;
        private final CompletableFuture<Void> handshake = new CompletableFuture<>();

        ChannelInitializer<Channel> initializer() {
            return new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel ch) {
                    // The bytes go to the webhook's address; the certificate must name the Service, as
                    // kube-apiserver checks.
                    http = AdmissionConnection.withTls(ch, tls, BenchPki.WEBHOOK_DNS_NAME, SERVICE_PORT);
                    http.handshake().whenComplete((done, error) -> {
                        if (error != null) {
                            handshake.completeExceptionally(error);
                        } else {
                            handshake.complete(null);
                        }
                    });
                }
            };
        }

        CompletableFuture<String> exchange(byte[] review) {
            return http.postJson(BenchPki.WEBHOOK_DNS_NAME + ":" + SERVICE_PORT, PATH + "?timeout=10s", review,
                    "tenant-gateway-bench (kube-apiserver admission)").thenCompose(response -> response.status() == 200
                    ? CompletableFuture.completedFuture(response.body())
                    : CompletableFuture.failedFuture(new IOException("webhook answered HTTP " + response.status()
                            + ": " + response.body())));
        }
    }
}
