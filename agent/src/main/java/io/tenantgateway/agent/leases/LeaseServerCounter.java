package io.tenantgateway.agent.leases;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.DefaultSharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.tunnel.client.ServerCounter;
import io.tenantgateway.tunnel.metrics.AgentMetrics;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --count-server-leases}: the server count is the number of unexpired konnectivity-server Leases (label
 * {@code --lease-label-selector} in {@code --lease-namespace}), read from an informer cache so the sync loop never
 * waits on the API. Before any lease is seen it falls back to the servers' {@code servercount} header.
 *
 * <p>Metrics as upstream's HEAD: {@code konnectivity_network_proxy_agent_lease_lists_total{http_status_code}},
 * {@code lease_watches_total{http_status_code}} and {@code lease_list_latency_seconds{http_status_code}}. They
 * count the informer's own list and watch calls (its first list, every relist after a watch expired or failed, and
 * every watch it opens): the informer is built on a {@link ListerWatcher} that wraps the lease operation and
 * observes each call's outcome (200, or the API's status code; 0 when no HTTP status came back).
 *
 * <p>Lifecycle: not a {@code common} {@code Lifecycle}, on purpose: the agent retries {@code start()} on this
 * instance until the API answers, so a failed start leaves it startable again rather than closed.
 */
public final class LeaseServerCounter implements ServerCounter, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaseServerCounter.class);

    private final KubernetesClient client;
    private final String namespace;
    private final String labelSelector;
    private final Clock clock;
    private volatile SharedIndexInformer<Lease> informer;
    private volatile int lastLogged = -1;
    private final Counter lists;
    private final Counter watches;
    private final Histogram listLatency;

    public LeaseServerCounter(KubernetesClient client, String namespace, String labelSelector, Clock clock,
            PrometheusRegistry registry) {
        requireNonNull(registry, "registry");
        lists = Counter.builder().name(AgentMetrics.PREFIX + "lease_lists_total")
                .help("Count of server lease list calls made by the agent, by HTTP status code")
                .labelNames("http_status_code").register(registry);
        watches = Counter.builder().name(AgentMetrics.PREFIX + "lease_watches_total")
                .help("Count of server lease watch calls made by the agent, by HTTP status code")
                .labelNames("http_status_code").register(registry);
        listLatency = Histogram.builder().name(AgentMetrics.PREFIX + "lease_list_latency_seconds")
                .help("Latency of server lease listing in seconds, by HTTP status code")
                .classicOnly().classicUpperBounds(0.005, 0.025, 0.1, 0.5, 2.5, 10, 30)
                .labelNames("http_status_code").register(registry);
        this.client = requireNonNull(client, "client");
        this.namespace = requireNonNull(namespace, "namespace");
        this.labelSelector = requireNonNull(labelSelector, "labelSelector");
        this.clock = requireNonNull(clock, "clock");
    }

    /**
     * Lists and watches the leases; blocks until the first list (the agent calls it in the background: until it
     * succeeds, {@link #serverCount} uses the servers' header). A failure leaves nothing running.
     */
    public synchronized void start() {
        if (informer != null) {
            return;
        }
        @SuppressWarnings("unchecked")
        ListerWatcher<Lease, LeaseList> leases = (ListerWatcher<Lease, LeaseList>) client.leases()
                .inNamespace(namespace).withLabelSelector(labelSelector);
        SharedIndexInformer<Lease> starting = new DefaultSharedIndexInformer<>(Lease.class, new Observed(leases), 0,
                ForkJoinPool.commonPool());
        try {
            starting.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
            informer = starting;
        } catch (Exception e) {
            starting.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("--count-server-leases: cannot list leases in " + namespace + " with "
                    + labelSelector + ": " + e.getMessage(), e);
        }
    }

    @Override
    public int serverCount(int fromHeaders) {
        SharedIndexInformer<Lease> leases = informer;
        if (leases == null) {
            return fromHeaders; // not listed yet (API unreachable): the tunnel does not wait for it
        }
        Instant now = clock.instant();
        int valid = (int) leases.getStore().list().stream().filter(lease -> valid(lease, now)).count();
        if (valid != lastLogged) {
            log.info("server count from leases: {} valid lease(s) in {} ({}){}", valid, namespace, labelSelector,
                    valid == 0 ? "; using servercount " + fromHeaders + " from the servers" : "");
            lastLogged = valid;
        }
        return valid == 0 ? fromHeaders : valid;
    }

    static boolean valid(Lease lease, Instant now) {
        if (lease.getSpec() == null || lease.getSpec().getRenewTime() == null
                || lease.getSpec().getLeaseDurationSeconds() == null) {
            return false;
        }
        Instant renewed = lease.getSpec().getRenewTime().toInstant();
        return renewed.plusSeconds(lease.getSpec().getLeaseDurationSeconds()).isAfter(now);
    }

    /** The lease operation, with each list and watch call counted as it completes. */
    private final class Observed implements ListerWatcher<Lease, LeaseList> {
        private final ListerWatcher<Lease, LeaseList> delegate;

        Observed(ListerWatcher<Lease, LeaseList> delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletableFuture<AbstractWatchManager<Lease>> submitWatch(ListOptions options, Watcher<Lease> watcher) {
            return delegate.submitWatch(options, watcher).whenComplete((manager, failure) ->
                    watches.labelValues(statusCode(failure)).inc());
        }

        @Override
        public CompletableFuture<LeaseList> submitList(ListOptions options) {
            long start = System.nanoTime();
            return delegate.submitList(options).whenComplete((list, failure) -> {
                String code = statusCode(failure);
                lists.labelValues(code).inc();
                listLatency.labelValues(code).observe((System.nanoTime() - start) / 1e9);
            });
        }

        @Override
        public Long getLimit() {
            return delegate.getLimit();
        }

        @Override
        public int getWatchReconnectInterval() {
            return delegate.getWatchReconnectInterval();
        }

        @Override
        public String getApiEndpointPath() {
            return delegate.getApiEndpointPath();
        }

        @Override
        public Config getConfig() {
            return delegate.getConfig();
        }
    }

    /** 200 on success, the API's status code on failure, 0 when the call failed without one (connection error). */
    static String statusCode(Throwable failure) {
        if (failure == null) {
            return "200";
        }
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
        return Integer.toString(cause instanceof KubernetesClientException api ? Math.max(0, api.getCode()) : 0);
    }

    @Override
    public synchronized void close() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
    }
}
