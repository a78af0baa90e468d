package io.tenantgateway.agent.testing;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
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
