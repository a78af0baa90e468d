package io.tenantgateway.certs.vertx;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * What one HTTP server of the agent holds at most, and for how long: a cap on concurrent connections, a deadline for
 * the TLS handshake, a deadline for each request to arrive in full (headers and body: a client that sends a byte a
 * second is cut when it runs out), a deadline for the next request on an open connection, and an idle timeout.
 * Applied with {@link ConnectionGuard} and {@link #applyTo} on Vert.x; the agent's plain-Netty health and admin ports
 * apply the same values themselves (a plain record: using it loads no Vert.x class).
 *
 * @param maxConnections connections served at once; more are closed at once (after the TLS handshake)
 * @param tlsHandshakeTimeout longest TLS handshake
 * @param requestTimeout longest time for a request to arrive in full, and for the next one to start arriving on a
 *     connection that has nothing in flight
 * @param idleTimeout a connection that neither reads nor writes for this long is closed
 */
public record ServerLimits(int maxConnections, Duration tlsHandshakeTimeout, Duration requestTimeout,
        Duration idleTimeout) {
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    /** Defaults: 1,024 connections, a 10 s handshake, 10 s per request (slowloris cut within 10 s), 60 s idle. */
    public static final ServerLimits DEFAULTS = new ServerLimits(DEFAULT_MAX_CONNECTIONS, Duration.ofSeconds(10),
            Duration.ofSeconds(10), Duration.ofSeconds(60));

    public ServerLimits {
        if (maxConnections < 1) {
            throw new IllegalArgumentException("max connections: " + maxConnections + " (expected: >= 1)");
        }
        positive("TLS handshake timeout", tlsHandshakeTimeout);
        positive("request timeout", requestTimeout);
        positive("idle timeout", idleTimeout);
    }

    private static void positive(String what, Duration value) {
        requireNonNull(value, what);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(what + ": " + value + " (expected: > 0)");
        }
    }

    public ServerLimits withMaxConnections(int value) {
        return new ServerLimits(value, tlsHandshakeTimeout, requestTimeout, idleTimeout);
    }

    public ServerLimits withRequestTimeout(Duration value) {
        return new ServerLimits(maxConnections, tlsHandshakeTimeout, value, idleTimeout);
    }

    /**
     * Sets the idle and handshake timeouts on Vert.x server options (the rest is {@link ConnectionGuard}'s), and
     * turns off HTTP/2 without TLS ({@code h2c}, prior knowledge or upgrade): to tell it from HTTP/1.1, Vert.x
     * waits for the client's first bytes before it creates the connection, so a client that sends nothing would
     * never reach the guard. HTTP/2 over TLS (ALPN {@code h2}) is unaffected.
     */
    public <T extends io.vertx.core.net.NetServerOptions> T applyTo(T options) {
        if (options instanceof io.vertx.core.http.HttpServerOptions http) {
            http.setHttp2ClearTextEnabled(false);
        }
        options.setIdleTimeout((int) Math.max(1, idleTimeout.toMillis()));
        options.setIdleTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS);
        options.setSslHandshakeTimeout(tlsHandshakeTimeout.toMillis());
        options.setSslHandshakeTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS);
        return options;
    }
}
