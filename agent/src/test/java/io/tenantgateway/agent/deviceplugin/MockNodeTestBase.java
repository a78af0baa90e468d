package io.tenantgateway.agent.deviceplugin;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.EventRecorder;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.testing.ApiOutage;
import io.tenantgateway.common.retry.Backoff;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the allocation unit tests share: node {@link #NODE} on fabric8's mock API server (CRUD mode, loopback) behind
 * an {@link ApiOutage} switch, a client that does not retry, the lock metrics, an event recorder and a clock fixed at
 * {@link #NOW}. JUnit starts it before a subclass's {@code @BeforeEach} and stops it after its {@code @AfterEach}.
 */
abstract class MockNodeTestBase {
    static final String NODE = PendingPodFinderTest.NODE;
    static final String NS = PendingPodFinderTest.NS;
    static final Instant NOW = Instant.parse("2026-12-07T20:45:36Z");

    final ApiOutage outage = new ApiOutage();
    final PrometheusRegistry registry = new PrometheusRegistry();
    final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    KubernetesMockServer server;
    KubernetesClient client;
    HamiClusterView cluster;
    LockMetrics metrics;
    EventRecorder events;

    @BeforeEach
    void startApi() {
        server = outage.serve();
        client = ApiOutage.clientWithoutRetries(server);
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        cluster = new HamiClusterView(client, registry, NODE, NS);
        metrics = new LockMetrics(registry);
        events = new EventRecorder(client, NODE, clock);
    }

    @AfterEach
    void stopApi() {
        metrics.unregister();
        client.close();
        server.destroy();
    }

    /** The owner-checked release of the node lock, with HAMi's default lock timeout, retrying on {@code retry}. */
    NodeLockRelease lockRelease(Backoff retry) {
        return new NodeLockRelease(client, NODE, retry, new LockPolicy(LockPolicy.DEFAULT_NODE_LOCK_TIMEOUT, true),
                metrics, events, clock);
    }
}
