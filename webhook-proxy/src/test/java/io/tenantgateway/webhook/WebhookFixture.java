package io.tenantgateway.webhook;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.quota.QuotaLookup;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One PKI, one Vert.x and one HTTPS client per test class; webhook servers started on loopback port 0 and closed
 * with the fixture.
 */
final class WebhookFixture implements AutoCloseable {
    /**
     * How long the webhook tests wait for what should happen (an answer, a connection, an account released): one
     * generous ceiling, because a busy two-core CI machine runs a cold TLS call many times slower than a laptop.
     */
    static final Duration WAIT = Duration.ofSeconds(30);

    final TestPki pki = TestPki.create("webhook");
    final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(2));
    final AdmissionClient client = new AdmissionClient(vertx, pki.trustOnlyMaterial());
    private final List<WebhookServer> servers = new ArrayList<>();

    static WebhookConfig.Builder loopback() {
        return WebhookConfig.builder().host("127.0.0.1").port(0);
    }

    WebhookServer start(WebhookConfig config) {
        return start(config, DeviceConfig.defaults(), null, new PrometheusRegistry());
    }

    WebhookServer start(WebhookConfig config, DeviceConfig devices, QuotaLookup quota, PrometheusRegistry registry) {
        WebhookServer.Builder builder = WebhookServer.builder(config).serverTls(pki.serverMaterial())
                .deviceConfig(devices).registry(registry).vertx(vertx);
        if (quota != null) {
            builder.quotaLookup(quota);
        }
        WebhookServer server = builder.build();
        servers.add(server);
        server.start();
        return server;
    }

    /** Closes {@code server} with the fixture. */
    void register(WebhookServer server) {
        servers.add(server);
    }

    @Override
    public void close() {
        servers.forEach(WebhookServer::close);
        client.close();
        AdmissionClient.await(vertx.close());
    }
}
