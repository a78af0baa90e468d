package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import java.time.Duration;
import java.util.Locale;

/**
 * The node-lock and allocation metrics, registered on the owner's registry once, shared by the lock controller (its
 * releases) and the device plugin's allocator (allocations and their releases); the owner unregisters them:
 * <ul>
 *   <li>{@code tenant_gateway_node_lock_releases_total{reason}} — allocated, expired, dangling, failed, malformed</li>
 *   <li>{@code tenant_gateway_allocations_total{result}} — pods whose allocation the device plugin completed: success,
 *       failed</li>
 *   <li>{@code tenant_gateway_node_lock_hold_seconds} — from the lock's time to its release by the agent</li>
 *   <li>{@code tenant_gateway_allocation_bookkeeping_total{result}} — a failed Allocate whose bookkeeping
 *       (bind-phase failed, Warning Event, own lock release) the API did not take: deferred (a pending record made),
 *       retried (an attempt that failed again), written (done after the API answered again), dropped (pod gone,
 *       re-bound or decided otherwise, lock no longer its own), overflow (not recorded: the pending set was full)</li>
 *   <li>{@code tenant_gateway_allocation_bookkeeping_pending} — pods whose failure bookkeeping is waiting for the
 *       API</li>
 * </ul>
 */
public final class LockMetrics {
    /** The {@code result} of an allocation the device plugin completed (its lowercase name is the label). */
    public enum Allocation { SUCCESS, FAILED }

    /** The {@code result} of a failed allocation's bookkeeping the API did not take at once (lowercase: the label). */
    public enum Bookkeeping { DEFERRED, RETRIED, WRITTEN, DROPPED, OVERFLOW }

    private final PrometheusRegistry registry;
    private final Counter releases;
    private final Counter allocations;
    private final Histogram holdSeconds;
    private final Counter bookkeeping;
    private final Gauge bookkeepingPending;

    public LockMetrics(PrometheusRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        releases = counter("tenant_gateway_node_lock_releases_total", "HAMi node locks (hami.io/mutex.lock) removed by"
                + " the agent, by reason", "reason", ReleaseReason.values());
        allocations = counter("tenant_gateway_allocations_total", "HAMi allocations completed by the agent's device"
                + " plugin (bind-phase success or failed), by result", "result", Allocation.values());
        holdSeconds = Histogram.builder()
                .name("tenant_gateway_node_lock_hold_seconds")
                .help("How long a node lock was held when the agent released it (lock time to release)")
                .classicOnly()
                .classicUpperBounds(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
                .register(registry);
        bookkeeping = counter("tenant_gateway_allocation_bookkeeping_total", "Failed allocations whose bookkeeping"
                + " (bind-phase failed, Event, own lock release) the API did not take at once, by result: deferred,"
                + " retried, written, dropped, overflow", "result", Bookkeeping.values());
        bookkeepingPending = Gauge.builder()
                .name("tenant_gateway_allocation_bookkeeping_pending")
                .help("Pods whose failed allocation's bookkeeping waits for the API (capped)")
                .register(registry);
    }

    /** Removes the metrics again. */
    public void unregister() {
        registry.unregister(releases);
        registry.unregister(allocations);
        registry.unregister(holdSeconds);
        registry.unregister(bookkeeping);
        registry.unregister(bookkeepingPending);
    }

    public void released(ReleaseReason reason, Duration held) {
        releases.labelValues(reason.label()).inc();
        if (held != null) {
            holdSeconds.observe(Math.max(0, held.toNanos()) / 1e9);
        }
    }

    public void allocation(Allocation result) {
        allocations.labelValues(label(result)).inc();
    }

    public void bookkeeping(Bookkeeping result) {
        bookkeeping.labelValues(label(result)).inc();
    }

    public void bookkeepingPending(int pods) {
        bookkeepingPending.set(pods);
    }

    /** A counter by {@code label}, every value there from the start: a rate over one not seen yet reads 0. */
    private Counter counter(String name, String help, String label, Enum<?>[] values) {
        Counter counter = Counter.builder().name(name).help(help).labelNames(label).register(registry);
        for (Enum<?> value : values) {
            counter.initLabelValues(label(value));
        }
        return counter;
    }

    /** The label of a value: its lowercase name (as {@link ReleaseReason#label()}). */
    private static String label(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
