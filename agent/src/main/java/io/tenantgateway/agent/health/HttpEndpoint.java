package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.cli.PortInUseException;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.tenantgateway.certs.vertx.ConnectionGuard;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A plain-HTTP listener on the agent's shared Vert.x: the lifecycle the health and admin ports share. Starting
 * waits for the bind (a port in use fails with a {@link PortInUseException} naming the flag and the address, which
 * the CLI prints as one line); closing is idempotent and bounded.
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}: a bind failure must reach the caller as the typed
 * {@code PortInUseException} (exit 2), which the base's wrapping {@code IllegalStateException} would hide.
 */
public final class HttpEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

    private final Vertx vertx;
    private final String name;
    private final String portFlag;
    private final String host;
    private final int port;
    private final Handler<HttpServerRequest> handler;
    private final ServerLimits limits;
    private HttpServer server;
    private volatile ConnectionGuard guard;

    /**
     * @param name what the port is, for messages ({@code health server}, {@code admin server})
     * @param portFlag the flag that sets the port ({@code --health-server-port}), named when it is in use
     * @param port 0 for an ephemeral port
     */
    public HttpEndpoint(Vertx vertx, String name, String portFlag, String host, int port,
            Handler<HttpServerRequest> handler) {
        this(vertx, name, portFlag, host, port, handler, ServerLimits.DEFAULTS);
    }

    /** @param limits connection limits and timeouts (the admin port's idle timeout outlasts a JFR download) */
    public HttpEndpoint(Vertx vertx, String name, String portFlag, String host, int port,
            Handler<HttpServerRequest> handler, ServerLimits limits) {
        this.limits = requireNonNull(limits, "limits");
        this.vertx = requireNonNull(vertx, "vertx");
        this.name = requireNonNull(name, "name");
        this.portFlag = requireNonNull(portFlag, "portFlag");
        this.host = requireNonNull(host, "host");
        this.port = port;
        this.handler = requireNonNull(handler, "handler");
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        try {
            // The webhook's limits here too: health and admin ports are plain HTTP, but as reachable.
            HttpServer created = vertx.createHttpServer(limits.applyTo(new HttpServerOptions()
                    .setHost(host).setPort(port)));
            guard = new ConnectionGuard(vertx, name, limits);
            server = created.requestHandler(guard.install(created, handler)).listen().toCompletionStage()
                    .toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name + ": interrupted while binding " + host + ":" + port, e);
        } catch (Exception e) {
            if (io.tenantgateway.common.net.AddressInUseException.isAddressInUse(e)) {
                throw new PortInUseException(portFlag, host, port, e);
            }
            throw new IllegalStateException(name + ": cannot listen on " + host + ":" + port + ": "
                    + rootMessage(e), e);
        }
    }

    public String host() {
        return host;
    }

    /** Open, rejected and timed-out connections, once started. */
    public ConnectionGuard connections() {
        return guard;
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
