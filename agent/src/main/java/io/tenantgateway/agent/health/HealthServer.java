package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.http.HttpEndpoint;
import io.tenantgateway.agent.http.HttpLoop;
import io.tenantgateway.agent.http.Request;
import io.tenantgateway.agent.http.Response;
import io.tenantgateway.common.config.ConfigException;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's health port (upstream {@code --health-server-port}, 8093; Kamaji probes 8134): {@code /healthz}
 * (liveness, always {@code ok} while the process serves HTTP), {@code /readyz} (every registered check, in the
 * Kubernetes {@code [+]name ok} / {@code [-]name failed: reason} format; a passing check with something to say shows
 * {@code [+]name ok (detail)}) and {@code /metrics} (Prometheus text).
 *
 * <p>Threading: every answer is built on the {@link HttpLoop}'s event loop (checks only read state, the scrape
 * reads the registry's thread-safe collectors); {@link #addCheck} before {@link #start}, from the starting thread.
 */
public final class HealthServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HealthServer.class);

    private final HttpLoop loop;
    private final HttpEndpoint endpoint;
    private final PrometheusRegistry registry;
    private final List<HealthCheck> checks = new CopyOnWriteArrayList<>();

    /**
     * @param host bind address; empty means all interfaces (upstream {@code --health-server-host ""})
     * @param port bind port, 0 for an ephemeral one (tests)
     */
    public HealthServer(HttpLoop loop, String host, int port, PrometheusRegistry registry) {
        if (port < 0 || port > 65535) {
            throw new ConfigException("--health-server-port", port, "0..65535");
        }
        this.loop = requireNonNull(loop, "loop");
        this.endpoint = new HttpEndpoint(loop, "health server", "--health-server-port",
                host == null || host.isEmpty() ? "0.0.0.0" : host, port, this::handle);
        this.registry = requireNonNull(registry, "registry");
        registerConnectionMetrics(registry);
    }

    /**
     * {@code tenant_gateway_health_server_connections} (open now) and
     * {@code tenant_gateway_health_server_connections_closed_total{reason}}: what the port closed to stay answerable
     * ({@code displaced}: a new connection took an idle one's slot at a cap; {@code first_byte_timeout};
     * {@code request_timeout}; {@code refused}: every slot was answering; {@code pipeline_overflow}).
     */
    private void registerConnectionMetrics(PrometheusRegistry registry) {
        GaugeWithCallback.builder().name("tenant_gateway_health_server_connections")
                .help("Connections open on the health port")
                .callback(callback -> callback.call(endpoint.openConnections())).register(registry);
        CounterWithCallback.builder().name("tenant_gateway_health_server_connections_closed_total")
                .help("Connections the health port closed to stay answerable, by reason").labelNames("reason")
                .callback(callback -> {
                    callback.call(endpoint.displacedConnections(), "displaced");
                    callback.call(endpoint.firstByteTimeouts(), "first_byte_timeout");
                    callback.call(endpoint.timedOutConnections(), "request_timeout");
                    callback.call(endpoint.rejectedConnections(), "refused");
                    callback.call(endpoint.pipelineOverflows(), "pipeline_overflow");
                }).register(registry);
    }

    /**
     * Adds a readiness check. Add every check before {@link #start()}: a check added later is missing from the
     * answers given until then, which would say "ready" too early.
     */
    public HealthServer addCheck(HealthCheck check) {
        checks.add(requireNonNull(check, "check"));
        return this;
    }

    public List<HealthCheck> checks() {
        return List.copyOf(checks);
    }

    public void start() {
        endpoint.start();
        log.atInfo().addKeyValue("address", endpoint.host() + ":" + boundPort())
                .addKeyValue("paths", "/healthz,/readyz,/metrics").log("health server listening");
    }

    public int boundPort() {
        return endpoint.boundPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(endpoint.host(), boundPort());
    }

    /** Whether every check passes right now. */
    public boolean ready() {
        return checks.stream().allMatch(check -> check.run().ok());
    }

    private void handle(Request request, Response response) {
        switch (request.path()) {
            case "/healthz", "/livez" -> response.header("content-type", "text/plain; charset=utf-8").end("ok");
            // /ready: upstream's deprecated alias, same answer.
            case "/readyz", "/ready" -> readyz(request, response);
            case "/metrics" -> metrics(response);
            default -> response.status(404).header("content-type", "text/plain; charset=utf-8")
                    .end("404 page not found: " + request.path() + " (paths: /healthz, /readyz, /ready, /metrics)\n");
        }
    }

    private void readyz(Request request, Response response) {
        boolean verbose = request.hasParam("verbose");
        StringBuilder body = new StringBuilder();
        boolean allOk = true;
        for (HealthCheck check : checks) {
            HealthCheck.Result result = check.run();
            allOk &= result.ok();
            body.append(result.ok() ? "[+]" + check.name() + " ok" + (result.reason().equals("ok") ? ""
                    : " (" + result.reason() + ")") : "[-]" + check.name() + " failed: " + result.reason())
                    .append('\n');
        }
        String text;
        if (allOk) {
            text = verbose ? body + "readyz check passed\n" : "ok";
        } else {
            text = body + "readyz check failed\n";
        }
        response.status(allOk ? 200 : 503).header("content-type", "text/plain; charset=utf-8")
                .header("x-content-type-options", "nosniff").end(text);
    }

    /**
     * Renders on the loop's blocking threads, never on the event loop the probes share: a render costs about a
     * millisecond plus a scan of the open file descriptors ({@code process_open_fds}), so pipelined scrapes on many
     * connections held the loop for seconds (measured: 300 connections pipelining {@code /metrics}, 4,800 renders,
     * {@code /healthz} timed out at 5 s for 25 s, which fails the liveness probe). Scrapes beyond what the blocking
     * threads and their queue take are answered 503 with {@code Retry-After} at once.
     */
    private void metrics(Response response) {
        metrics(loop, registry, TextFormat.WRITER, response);
    }

    /**
     * The text format's writer (stateless, shared), made at the first scrape: an agent nobody scrapes never loads
     * the exposition format's classes (issue 35).
     */
    private static final class TextFormat {
        static final PrometheusTextFormatWriter WRITER = PrometheusTextFormatWriter.create();
    }

    /**
     * Answers a scrape of {@code registry} rendered on {@code loop}'s blocking threads (as {@link #metrics} says why);
     * for every listener that serves Prometheus text (the vGPU monitor's too).
     */
    public static void metrics(HttpLoop loop, PrometheusRegistry registry, PrometheusTextFormatWriter writer,
            Response response) {
        loop.blocking(() -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
            writer.write(out, registry.scrape());
            return out.toByteArray();
        }).whenComplete((body, failure) -> {
            if (failure == null) {
                response.header("content-type", writer.getContentType()).end(body);
            } else if (failure instanceof RejectedExecutionException) {
                response.status(503).header("retry-after", "1").header("content-type", "text/plain; charset=utf-8")
                        .end("metrics: " + failure.getMessage() + "\n");
            } else {
                log.error("metrics scrape failed", failure);
                response.status(500).header("content-type", "text/plain; charset=utf-8")
                        .end("metrics scrape failed: " + failure.getMessage() + "\n");
            }
        });
    }

    @Override
    public void close() {
        endpoint.close();
    }

}
