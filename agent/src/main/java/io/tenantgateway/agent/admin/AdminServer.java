package io.tenantgateway.agent.admin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.Agent;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The admin port (upstream {@code --admin-server-port}, 8094; Kamaji 8133), bound to {@code --admin-bind-address}
 * (127.0.0.1 by default): what the agent is doing right now, as JSON under {@code /debug/*}. Every answer is built
 * from snapshots (immutable records), so serving it never blocks the data path.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    private final Vertx vertx;
    private final String host;
    private final int port;
    private final Agent agent;
    private final JsonMapper json = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
    private HttpServer server;

    public AdminServer(Vertx vertx, String host, int port, Agent agent) {
        this.vertx = requireNonNull(vertx, "vertx");
        this.host = host == null || host.isEmpty() ? "127.0.0.1" : host;
        this.port = port;
        this.agent = requireNonNull(agent, "agent");
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        try {
            server = vertx.createHttpServer(new HttpServerOptions().setHost(host).setPort(port))
                    .requestHandler(this::handle).listen().toCompletionStage().toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("admin server: cannot listen on " + host + ":" + port + ": "
                    + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()), e);
        }
        log.info("admin server listening address={}:{} paths=/debug/{{config,readiness,tunnels,devices,locks,admissions}}",
                host, server.actualPort());
    }

    public int boundPort() {
        HttpServer current = server;
        return current == null ? -1 : current.actualPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(host, boundPort());
    }

    private void handle(HttpServerRequest request) {
        Object body = switch (request.path()) {
            case "/debug/config" -> agent.config().describe();
            case "/debug/readiness" -> agent.readiness();
            case "/debug/tunnels" -> agent.tunnel().map(t -> (Object) t.snapshot()).orElse(off("tunnel"));
            case "/debug/devices" -> agent.devices().map(d -> (Object) d.snapshot()).orElse(off("device registration"));
            case "/debug/locks" -> agent.allocation().map(a -> (Object) a.snapshot()).orElse(off("lock controller"));
            case "/debug/admissions" -> agent.webhook().map(w -> (Object) w.recentAdmissions().snapshot())
                    .orElse(off("webhook"));
            default -> null;
        };
        if (body == null) {
            request.response().setStatusCode(404).putHeader("content-type", "text/plain; charset=utf-8")
                    .end("404 page not found: " + request.path() + " (paths: /debug/config, /debug/readiness,"
                            + " /debug/tunnels, /debug/devices, /debug/locks, /debug/admissions)\n");
            return;
        }
        request.response().putHeader("content-type", "application/json").end(json.writeValueAsString(body));
    }

    private static Map<String, Object> off(String part) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("enabled", false);
        body.put("reason", part + " is not enabled on this agent");
        return body;
    }

    @Override
    public synchronized void close() {
        if (server == null) {
            return;
        }
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("admin server close failed: {}", e.toString());
        } finally {
            server = null;
        }
    }
}
