package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.tenantgateway.tunnel.client.ServerCounter;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --count-server-leases}: the server count is the number of unexpired konnectivity-server Leases (label
 * {@code --lease-label-selector} in {@code --lease-namespace}), read from an informer cache so the sync loop never
 * waits on the API. Before any lease is seen it falls back to the servers' {@code servercount} header.
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

    public LeaseServerCounter(KubernetesClient client, String namespace, String labelSelector, Clock clock) {
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
        SharedIndexInformer<Lease> starting = client.leases().inNamespace(namespace)
                .withLabelSelector(labelSelector).runnableInformer(0);
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

    @Override
    public synchronized void close() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
    }
}
