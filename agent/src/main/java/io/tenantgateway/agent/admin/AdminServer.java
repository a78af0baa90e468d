package io.tenantgateway.agent.admin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.http.HttpEndpoint;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.http.Request;
import io.tenantgateway.agent.http.Response;
import io.tenantgateway.agent.node.NodeRegistrations;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.webhook.RecentAdmissions;
import java.time.Duration;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.LinkedHashMap;
import io.tenantgateway.agent.part.PartView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin port (upstream {@code --admin-server-port}, 8094; Kamaji 8133), bound to {@code --admin-bind-address}
 * (127.0.0.1 by default): what the agent is doing right now, as JSON under {@code /debug/*} and as a status page at
 * {@code /ui}. Every answer is built from snapshots (immutable records), read without locks shared with the data
 * path, on the {@link HttpLoop}'s event loop: nothing here blocks. {@code /metrics} answers 301 to the health port's
 * {@code /metrics}, as upstream's admin port does. With {@code --enable-profiling} it also serves
 * {@link Profiling}'s paths (their blocking work runs on the loop's blocking threads).
 *
 * <p>Webhook types ({@code RecentAdmissions}, {@code AdmissionRecord}) are touched only when the webhook is on:
 * no method reference or lambda names them on a path a tunnel-only agent takes, so such an agent never loads them.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    static final int DEFAULT_REFRESH_SECONDS = 5;
    static final List<String> DEBUG_PATHS = List.of("/debug/config", "/debug/readiness", "/debug/tunnels",
            "/debug/devices", "/debug/locks", "/debug/admissions");
    /** The page has inline styles and nothing else: no scripts, no external assets, no framing. */
    private static final String PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none';"
            + " form-action 'none'; frame-ancestors 'none'";

    private final HttpEndpoint endpoint;
    private final AgentStatus agent;
    private final Clock clock;
    private final String version;
    private final Options options;
    private final Profiling profiling;

    /**
     * @param agent what the pages show, read on the event loop
     * @param version the build's version string, shown on the status page
     */
    public AdminServer(HttpLoop loop, String host, int port, AgentStatus agent, String version) {
        this(loop, host, port, agent, version, Clock.systemUTC());
    }

    public AdminServer(HttpLoop loop, String host, int port, AgentStatus agent, String version, Clock clock) {
        this(loop, host, port, agent, version, clock, Options.NONE);
    }

    public AdminServer(HttpLoop loop, String host, int port, AgentStatus agent, String version, Clock clock,
            Options options) {
        this.options = requireNonNull(options, "options");
        // A JFR download is silent for up to its N seconds: the idle timeout must outlast the longest one.
        ServerLimits limits = options.profiling() ? new ServerLimits(
                ServerLimits.DEFAULTS.maxConnections(), ServerLimits.DEFAULTS.tlsHandshakeTimeout(),
                ServerLimits.DEFAULTS.requestTimeout(), Duration.ofSeconds(Profiling.MAX_SECONDS + 30)) : ServerLimits.DEFAULTS;
        this.endpoint = new HttpEndpoint(loop, "admin server", "--admin-server-port",
                host == null || host.isEmpty() ? "127.0.0.1" : host, port, this::handle, limits);
        this.agent = requireNonNull(agent, "agent");
        this.version = requireNonNull(version, "version");
        this.clock = requireNonNull(clock, "clock");
        this.profiling = options.profiling() ? new Profiling(loop, options.contentionProfiling()) : null;
    }

    /**
     * @param healthPort the health port {@code /metrics} redirects to; -1: none (then {@code /metrics} is 404)
     * @param profiling {@code --enable-profiling}: serve {@link Profiling}'s paths
     * @param contentionProfiling {@code --enable-contention-profiling}: lock events in the JFR recording
     */
    public record Options(int healthPort, boolean profiling, boolean contentionProfiling) {
        public static final Options NONE = new Options(-1, false, false);
    }

    public void start() {
        endpoint.start();
        log.atInfo().addKeyValue("address", endpoint.host() + ":" + endpoint.boundPort())
                .addKeyValue("paths", "/ui,/metrics,/debug/{config,readiness,tunnels,devices,locks,admissions}"
                        + (profiling == null ? "" : "," + String.join(",", Profiling.PATHS)))
                .log("admin server listening");
    }

    public int boundPort() {
        return endpoint.boundPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(endpoint.host(), boundPort());
    }

    private void handle(Request request, Response response) {
        if (!request.isGetOrHead()) {
            response.status(405).header("allow", "GET, HEAD")
                    .header("content-type", "text/plain; charset=utf-8").end("405 method not allowed\n");
            return;
        }
        String path = request.path();
        try {
            switch (path) {
                case "/", "/ui/" -> response.status(302).header("location", "/ui").end();
                case "/ui" -> page(request, response);
                case "/metrics" -> metricsRedirect(request, response);
                case "/debug", "/debug/" -> json(response, Map.of("paths", debugPaths(), "statusPage", "/ui"));
                default -> debug(request, response, path);
            }
        } catch (IllegalArgumentException e) {
            response.status(400).header("content-type", "text/plain; charset=utf-8").end(e.getMessage() + "\n");
        }
    }

    /**
     * Upstream's redirect: the host the client used for this port (its {@code Host} header; the admin bind address
     * when there is none) with the health port, path and query kept.
     */
    private void metricsRedirect(Request request, Response response) {
        if (options.healthPort() < 0) {
            notFound(response, "/metrics");
            return;
        }
        String host = request.host() != null ? request.host() : endpoint.host();
        String location = "http://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":"
                + options.healthPort() + "/metrics" + (request.query() == null ? "" : "?" + request.query());
        response.status(301).header("location", location)
                .header("content-type", "text/html; charset=utf-8")
                .end("<a href=\"" + Html.text(location) + "\">Moved Permanently</a>.\n");
    }

    private void notFound(Response response, String path) {
        response.status(404).header("content-type", "text/plain; charset=utf-8")
                .end("404 page not found: " + path + " (paths: /ui, /metrics, " + String.join(", ", debugPaths())
                        + ")\n");
    }

    private List<String> debugPaths() {
        List<String> paths = new java.util.ArrayList<>(DEBUG_PATHS);
        for (PartView.Section section : agent.partSections()) {
            paths.add("/debug/" + section.name());
        }
        if (profiling != null) {
            paths.addAll(Profiling.PATHS);
        }
        return paths;
    }

    private void debug(Request request, Response response, String path) {
        if (profiling != null && profiling.handle(request, response, path)) {
            return;
        }
        Object body = switch (path) {
            case "/debug/config" -> agent.config();
            case "/debug/readiness" -> readiness();
            case "/debug/tunnels" -> agent.tunnel().map(t -> (Object) DebugViews.tunnels(t,
                    proxyServer(), agent.agentId())).orElse(off("tunnel"));
            case "/debug/devices" -> devices();
            case "/debug/locks" -> agent.locks().map(a -> (Object) DebugViews.locks(a))
                    .orElse(off("lock controller"));
            case "/debug/admissions" -> admissions(request);
            default -> partDebug(path);
        };
        if (body == null) {
            notFound(response, path);
            return;
        }
        json(response, body);
    }

    /** {@code /debug/<part>}: the JSON of a part that shows a section of its own, or {@code null} for no such part. */
    private Object partDebug(String path) {
        for (PartView.Section section : agent.partSections()) {
            if (path.equals("/debug/" + section.name())) {
                return section.view().map(PartView::debug).orElseGet(() -> off(section.name()));
            }
        }
        return null;
    }

    /**
     * Device registration and the device plugin, with this node's HAMi registrations (every vendor) also where
     * device registration is off but a part reads the Node (the lock controller beside HAMi's device plugins).
     */
    private Map<String, Object> devices() {
        NodeRegistrations registrations = agent.registrations();
        Map<String, Object> body = agent.devices().map(d -> DebugViews.devices(d, agent.devicePlugin().orElse(null)))
                .orElseGet(() -> off("device registration"));
        if (registrations.state() != NodeRegistrations.State.OFF) {
            body.put("registrations", DebugViews.registrations(registrations));
        }
        return body;
    }

    /** Plain code, no lambda over {@code RecentAdmissions}: without the webhook the class is never loaded. */
    private Object admissions(Request request) {
        Optional<RecentAdmissions> admissions = agent.admissions();
        if (admissions.isEmpty()) {
            return off("webhook");
        }
        RecentAdmissions recent = admissions.get();
        return DebugViews.admissions(recent.snapshot(), recent.total(), recent.capacity(), limit(request));
    }

    private void json(Response response, Object body) {
        response.header("content-type", "application/json").header("cache-control", "no-store")
                .end(Json.MAPPER.writeValueAsString(body));
    }

    private Map<String, Object> readiness() {
        Map<String, Object> out = new LinkedHashMap<>();
        agent.readiness().forEach((name, result) -> out.put(name, Map.of("ok", result.ok(), "reason",
                result.reason())));
        return out;
    }

    /** {@code ?limit=N}: the newest N admissions (default: all kept). */
    private static int limit(Request request) {
        String value = request.param("limit");
        if (value == null) {
            return Integer.MAX_VALUE;
        }
        try {
            int limit = Integer.parseInt(value);
            if (limit >= 0) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException("limit: '" + value + "' (expected: a number >= 0)");
    }

    private void page(Request request, Response response) {
        int refresh = DEFAULT_REFRESH_SECONDS;
        String value = request.param("refresh");
        if (value != null) {
            try {
                refresh = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                refresh = -1;
            }
            if (refresh < 0 || refresh > 3600) {
                throw new IllegalArgumentException("refresh: '" + value + "' (expected: seconds 0..3600, 0 = off)");
            }
        }
        // Plain code, no method reference to RecentAdmissions: without the webhook the class is never loaded.
        Optional<RecentAdmissions> admissions = agent.admissions();
        RecentAdmissions recent = admissions.isPresent() ? admissions.get() : null;
        StatusPage.Model model = new StatusPage.Model(clock.instant(), version, agent.agentId(),
                agent.nodeName().orElse(""), proxyServer(), agent.readiness(),
                agent.tunnel(),
                agent.devices(),
                agent.locks(),
                agent.registrations(),
                recent == null ? Optional.empty() : Optional.of(recent.snapshot()),
                recent == null ? 0L : recent.total(),
                agent.partSections());
        response.header("content-type", "text/html; charset=utf-8")
                .header("cache-control", "no-store")
                .header("content-security-policy", PAGE_POLICY)
                .header("x-content-type-options", "nosniff")
                .header("referrer-policy", "no-referrer")
                .end(StatusPage.render(model, refresh));
    }

    /** {@code host:port} of konnectivity-server, or {@code ""} with the tunnel off. */
    private String proxyServer() {
        Optional<TunnelConfig> tunnel = agent.tunnelConfig();
        if (tunnel.isEmpty()) {
            return "";
        }
        String host = tunnel.get().proxyServerHost();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + tunnel.get().proxyServerPort();
    }

    private static Map<String, Object> off(String part) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("enabled", false);
        body.put("reason", part + " is not enabled on this agent");
        return body;
    }

    @Override
    public void close() {
        endpoint.close();
    }

    /**
     * The JSON mapper, made on the first {@code /debug} answer: an agent nobody asks for JSON loads no Jackson (the
     * footprint; agent/REFERENCE.md, "Memory budget"). It escapes what a terminal would act on
     * ({@link io.tenantgateway.agent.logging.TerminalSafeJson}): {@code curl …/debug/devices} shows annotation values.
     */
    private static final class Json {
        static final tools.jackson.databind.json.JsonMapper MAPPER = tools.jackson.databind.json.JsonMapper.builder(
                io.tenantgateway.agent.logging.TerminalSafeJson.factory())
                .enable(tools.jackson.databind.SerializationFeature.INDENT_OUTPUT).build();
    }
}
