package io.tenantgateway.agent.locks;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import java.time.Duration;

/**
 * The node-lock and allocation metrics, registered on the owner's registry once, shared by the lock controller (its
 * releases) and the device plugin's allocator (allocations and their releases); the owner unregisters them:
 * <ul>
 *   <li>{@code tenant_gateway_node_lock_releases_total{reason}} — allocated, expired, dangling, failed, malformed</li>
 *   <li>{@code tenant_gateway_allocations_total{result}} — pods whose allocation the device plugin completed: success,
 *       failed</li>
 *   <li>{@code tenant_gateway_node_lock_hold_seconds} — from the lock's time to its release by the agent</li>
 * </ul>
 */
public final class LockMetrics {
    static final String RESULT_SUCCESS = "success";
    static final String RESULT_FAILED = "failed";

    private final PrometheusRegistry registry;
    private final Counter releases;
    private final Counter allocations;
    private final Histogram holdSeconds;

    public LockMetrics(PrometheusRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        releases = Counter.builder()
                .name("tenant_gateway_node_lock_releases_total")
                .help("HAMi node locks (hami.io/mutex.lock) removed by the agent, by reason")
                .labelNames("reason")
                .register(registry);
        for (ReleaseReason reason : ReleaseReason.values()) {
            releases.initLabelValues(reason.label());
        }
        allocations = Counter.builder()
                .name("tenant_gateway_allocations_total")
                .help("HAMi allocations completed by the agent's device plugin (bind-phase success or failed), by result")
                .labelNames("result")
                .register(registry);
        allocations.initLabelValues(RESULT_SUCCESS);
        allocations.initLabelValues(RESULT_FAILED);
        holdSeconds = Histogram.builder()
                .name("tenant_gateway_node_lock_hold_seconds")
                .help("How long a node lock was held when the agent released it (lock time to release)")
                .classicOnly()
                .classicUpperBounds(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
                .register(registry);
    }

    /** Removes the metrics again. */
    public void unregister() {
        registry.unregister(releases);
        registry.unregister(allocations);
        registry.unregister(holdSeconds);
    }

    void released(ReleaseReason reason, Duration held) {
        releases.labelValues(reason.label()).inc();
        if (held != null) {
            holdSeconds.observe(Math.max(0, held.toNanos()) / 1e9);
        }
    }

    void allocation(String result) {
        allocations.labelValues(result).inc();
    }
}
