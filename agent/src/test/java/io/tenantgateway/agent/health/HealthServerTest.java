package io.tenantgateway.agent.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.http.HttpLoop;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class HealthServerTest {
    private final HttpLoop loop = new HttpLoop();
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final AtomicBoolean connected = new AtomicBoolean();
    private final HttpClient http = HttpClient.newHttpClient();
    private HealthServer server;

    @BeforeEach
    void start() {
        loop.start();
        server = new HealthServer(loop, "127.0.0.1", 0, registry)
                .addCheck(new HealthCheck("server-connected", () -> connected.get() ? HealthCheck.Result.OK
                        : HealthCheck.Result.failed("no servers connected")))
                .addCheck(new HealthCheck("webhook-serving", () -> HealthCheck.Result.OK));
        server.start();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        loop.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundPort() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthzIsAlwaysOk() throws Exception {
        HttpResponse<String> response = get("/healthz");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("ok");
    }

    @Test
    void readyzNamesTheFailingCheckInTheUpstreamFormat() throws Exception {
        HttpResponse<String> notReady = get("/readyz");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).isEqualTo("[-]server-connected failed: no servers connected\n"
                + "[+]webhook-serving ok\nreadyz check failed\n");

        connected.set(true);
        HttpResponse<String> ready = get("/readyz");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("ok");
        assertThat(get("/readyz?verbose").body())
                .isEqualTo("[+]server-connected ok\n[+]webhook-serving ok\nreadyz check passed\n");
    }

    @Test
    void aThrowingCheckFailsReadinessNotTheEndpoint() throws Exception {
        server.addCheck(new HealthCheck("devices-registered", () -> {
            throw new IllegalStateException("boom");
        }));
        connected.set(true);
        HttpResponse<String> response = get("/readyz");
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).contains("[-]devices-registered failed: check threw java.lang.IllegalStateException:"
                + " boom");
    }

    @Test
    void metricsServesTheRegistryAsPrometheusText() throws Exception {
        Counter.builder().name("konnectivity_network_proxy_agent_test_total").help("test").register(registry).inc();
        HttpResponse<String> response = get("/metrics");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("text/plain"));
        assertThat(response.body()).contains("konnectivity_network_proxy_agent_test_total 1.0");
    }

    @Test
    void unknownPathsAre404WithTheKnownPaths() throws Exception {
        HttpResponse<String> response = get("/nope");
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body()).contains("/healthz, /readyz, /ready, /metrics");
    }

    @Test
    void readyIsUpstreamsAliasOfReadyz() throws Exception {
        for (boolean up : new boolean[] {false, true}) {
            connected.set(up);
            for (String query : new String[] {"", "?verbose"}) {
                HttpResponse<String> readyz = get("/readyz" + query);
                HttpResponse<String> ready = get("/ready" + query);
                assertThat(ready.statusCode()).isEqualTo(readyz.statusCode()).isEqualTo(up ? 200 : 503);
                assertThat(ready.body()).isEqualTo(readyz.body());
            }
        }
    }

    @Test
    void rejectsBadPortsAndCheckNames() {
        assertThatThrownBy(() -> new HealthServer(loop, "", 70000, registry))
                .hasMessage("--health-server-port: 70000 (expected: 0..65535)");
        assertThatThrownBy(() -> new HealthCheck("Server Connected", () -> HealthCheck.Result.OK))
                .hasMessageContaining("expected: lower-case words joined by '-'");
    }
}
