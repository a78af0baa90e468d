package io.tenantgateway.agent.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The mock API server's dispatcher behind a switch: the requests {@link #failing} matches get a 500 Status (etcd timing
 * out, as a real API server says it), the rest go to the CRUD dispatcher; {@link #refused} counts the 500s.
 */
public final class ApiOutage extends Dispatcher {
    public volatile Dispatcher delegate;
    public volatile Predicate<RecordedRequest> failing = request -> false;
    public final AtomicInteger refused = new AtomicInteger();

    /**
     * Starts fabric8's mock API server (CRUD mode, plain HTTP on loopback, port 0) behind this switch: its
     * {@code expect()} expectations and the CRUD store answer whatever the switch lets through.
     */
    public KubernetesMockServer serve() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        delegate = new KubernetesMixedDispatcher(responses);
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, this,
                false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        return server;
    }

    /** A client of {@code server} that does not retry: each 500 of an outage is seen by the caller. */
    public static KubernetesClient clientWithoutRetries(KubernetesMockServer server) {
        return server.createClient(b -> b.editOrNewConfig().withRequestRetryBackoffLimit(0).endConfig());
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        if (failing.test(request)) {
            refused.incrementAndGet();
            return new MockResponse().setResponseCode(500).setHeader("Content-Type", "application/json")
                    .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
                            + "\"etcdserver: request timed out\",\"reason\":\"InternalError\",\"code\":500}");
        }
        return delegate.dispatch(request);
    }

    @Override
    public void shutdown() {
        delegate.shutdown();
    }

    /** Every request fails. */
    public void down() {
        failing = request -> true;
    }

    /** Writes (PATCH, POST, PUT, DELETE) fail: reads answer, nothing can be written. */
    public void writesDown() {
        failing = request -> !"GET".equals(request.getMethod());
    }

    public void heal() {
        failing = request -> false;
    }
}
