package io.tenantgateway.certs.vertx;

import static java.util.Objects.requireNonNull;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces {@link ServerLimits} on a Vert.x HTTP server (HTTP/1.1 and HTTP/2): connections beyond the cap are closed
 * as they arrive; a request that has not arrived in full within the request timeout closes its connection; a
 * connection with nothing in flight that does not start a request within the request timeout is closed (so a client
 * trickling header bytes — slowloris — is cut, which the idle timeout alone cannot do: each byte resets it).
 *
 * <p>Threading: every callback runs on the connection's event loop; the counters are atomic because connections of
 * one server are spread over several loops.
 */
public final class ConnectionGuard {
    private static final Logger log = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;

    private final Vertx vertx;
    private final String name;
    private final ServerLimits limits;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    /** Each kind of warning is throttled on its own, so a flood of one kind never hides the other. */
    private final AtomicLong lastCapWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final AtomicLong lastTimeoutWarn = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private final Map<HttpConnection, Connection> connections = new ConcurrentHashMap<>();

    /** @param name what the server is, for log lines ({@code webhook}, {@code health server}) */
    public ConnectionGuard(Vertx vertx, String name, ServerLimits limits) {
        this.vertx = requireNonNull(vertx, "vertx");
        this.name = requireNonNull(name, "name");
        this.limits = requireNonNull(limits, "limits");
    }

    /** Installs the guard's connection handler on {@code server} and returns {@code handler} wrapped by it. */
    public Handler<HttpServerRequest> install(HttpServer server, Handler<HttpServerRequest> handler) {
        requireNonNull(handler, "handler");
        server.connectionHandler(this::connected);
        return request -> {
            Connection connection = connections.get(request.connection());
            if (connection != null) {
                connection.requestStarted(request);
            }
            handler.handle(request);
        };
    }

    /** Connections open now. */
    public int openConnections() {
        return open.get();
    }

    /** Connections closed because the cap was reached. */
    public long rejectedConnections() {
        return rejected.get();
    }

    /** Connections closed because a request (or the next one) did not arrive in time. */
    public long timedOutConnections() {
        return timedOut.get();
    }

    public ServerLimits limits() {
        return limits;
    }

    private void connected(HttpConnection connection) {
        if (open.incrementAndGet() > limits.maxConnections()) {
            open.decrementAndGet();
            rejected.incrementAndGet();
            warn(lastCapWarn, "{}: {} connections open, the cap (max connections {}); closing the new one from {}", name,
                    limits.maxConnections(), limits.maxConnections(), connection.remoteAddress());
            connection.close();
            return;
        }
        Connection state = new Connection(connection);
        connections.put(connection, state);
        connection.closeHandler(ignored -> {
            connections.remove(connection);
            state.cancelTimer();
            open.decrementAndGet();
        });
        state.awaitNextRequest();
    }

    private void warn(AtomicLong lastWarn, String format, Object... args) {
        long now = System.nanoTime();
        long last = lastWarn.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarn.compareAndSet(last, now)) {
            log.warn(format + " (logged once a minute)", args);
        } else {
            log.debug(format, args);
        }
    }

    /** One connection's deadlines; confined to its event loop. */
    private final class Connection {
        private final HttpConnection connection;
        private int inFlight;
        private long timer = -1;
        /** When the next request must have arrived in full (System.nanoTime), while nothing is in flight. */
        private long deadline;

        Connection(HttpConnection connection) {
            this.connection = connection;
        }

        void awaitNextRequest() {
            cancelTimer();
            deadline = System.nanoTime() + limits.requestTimeout().toNanos();
            timer = vertx.setTimer(limits.requestTimeout().toMillis(), id -> {
                timer = -1;
                if (inFlight == 0) {
                    timedOut.incrementAndGet();
                    warn(lastTimeoutWarn, "{}: no request from {} within {} ms; closing the connection", name,
                            connection.remoteAddress(), limits.requestTimeout().toMillis());
                    connection.close();
                }
            });
        }

        void requestStarted(HttpServerRequest request) {
            // The first request on an idle connection keeps what is left of the connection's deadline: headers
            // and body must arrive in full within the request timeout of the connection opening (or of the last
            // response); further concurrent HTTP/2 streams get the full timeout each.
            long budgetMillis = inFlight == 0
                    ? Math.max(1, (deadline - System.nanoTime()) / 1_000_000) : limits.requestTimeout().toMillis();
            inFlight++;
            cancelTimer();
            vertx.setTimer(budgetMillis, id -> {
                if (!request.isEnded()) {
                    timedOut.incrementAndGet();
                    warn(lastTimeoutWarn, "{}: request from {} not received in full within {} ms; closing the connection", name,
                            connection.remoteAddress(), limits.requestTimeout().toMillis());
                    connection.close();
                }
            });
            boolean[] finished = new boolean[1];
            Handler<Void> done = ignored -> {
                // The end and close handlers may both fire for one response: count it once.
                if (!finished[0]) {
                    finished[0] = true;
                    inFlight--;
                    if (inFlight == 0) {
                        awaitNextRequest();
                    }
                }
            };
            request.response().endHandler(done);
            request.response().closeHandler(done);
        }

        void cancelTimer() {
            if (timer >= 0) {
                vertx.cancelTimer(timer);
                timer = -1;
            }
        }
    }
}
