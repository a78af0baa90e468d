package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.memory.MemoryBudget;

/**
 * The process-wide {@link MemoryBudget} on {@code /metrics}: each account's limit, what it holds now, the most it held
 * and how often it refused a reservation (the tunnel then stopped reading, the webhook answered 429/503). Accounts made
 * after registration show up on the next scrape.
 */
public final class MemoryBudgetMetrics {
    private MemoryBudgetMetrics() {
    }

    public static void register(MemoryBudget budget, PrometheusRegistry registry) {
        requireNonNull(budget, "budget");
        requireNonNull(registry, "registry");
        GaugeWithCallback.builder().name("tenant_gateway_memory_budget_limit_bytes")
                .help("Bytes an account of the agent's memory budget may hold (a share of the heap or direct limit)")
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(a.limit(), a.name(), pool(a))))
                .register(registry);
        GaugeWithCallback.builder().name("tenant_gateway_memory_budget_used_bytes")
                .help("Bytes an account of the agent's memory budget holds now")
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(a.used(), a.name(), pool(a))))
                .register(registry);
        GaugeWithCallback.builder().name("tenant_gateway_memory_budget_peak_bytes")
                .help("The most bytes an account of the agent's memory budget held at once since the start")
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(a.peak(), a.name(), pool(a))))
                .register(registry);
        CounterWithCallback.builder().name("tenant_gateway_memory_budget_refusals")
                .help("Reservations an account of the agent's memory budget refused (reading stopped or request refused)")
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(a.refusals(), a.name(), pool(a))))
                .register(registry);
    }

    private static String pool(MemoryBudget.Account account) {
        return account.pool().name().toLowerCase(java.util.Locale.ROOT);
    }
}
