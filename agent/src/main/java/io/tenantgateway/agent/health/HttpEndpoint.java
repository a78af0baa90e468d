package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A plain-HTTP listener on the agent's shared Vert.x: the lifecycle the health and admin ports share. Starting
 * waits for the bind (a port in use fails the agent's start with the address in the message); closing is
 * idempotent and bounded.
 */
public final class HttpEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

    private final Vertx vertx;
    private final String name;
    private final String host;
    private final int port;
    private final Handler<HttpServerRequest> handler;
    private HttpServer server;

    /**
     * @param name what the port is, for messages ({@code health server}, {@code admin server})
     * @param port 0 for an ephemeral port
     */
    public HttpEndpoint(Vertx vertx, String name, String host, int port, Handler<HttpServerRequest> handler) {
        this.vertx = requireNonNull(vertx, "vertx");
        this.name = requireNonNull(name, "name");
        this.host = requireNonNull(host, "host");
        this.port = port;
        this.handler = requireNonNull(handler, "handler");
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        try {
            server = vertx.createHttpServer(new HttpServerOptions().setHost(host).setPort(port))
                    .requestHandler(handler).listen().toCompletionStage().toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(name + ": cannot listen on " + host + ":" + port + ": "
                    + rootMessage(e), e);
        }
    }

    public String host() {
        return host;
    }

    /** The bound port, or -1 before start and after close. */
    public synchronized int boundPort() {
        return server == null ? -1 : server.actualPort();
    }

    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("{} close failed: {}", name, rootMessage(e));
        } finally {
            server = null;
        }
    }

    static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
