package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.memory.MemoryBudget;
import java.util.function.ToLongFunction;

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
        gauge(budget, registry, "limit", "Bytes an account of the agent's memory budget may hold (a share of the heap"
                + " or direct limit)", MemoryBudget.Account::limit);
        gauge(budget, registry, "used", "Bytes an account of the agent's memory budget holds now",
                MemoryBudget.Account::used);
        gauge(budget, registry, "peak", "The most bytes an account of the agent's memory budget held at once since the"
                + " start", MemoryBudget.Account::peak);
        CounterWithCallback.builder().name("tenant_gateway_memory_budget_refusals")
                .help("Reservations an account of the agent's memory budget refused (reading stopped or request refused)")
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(a.refusals(), a.name(), pool(a))))
                .register(registry);
    }

    private static void gauge(MemoryBudget budget, PrometheusRegistry registry, String figure, String help,
            ToLongFunction<MemoryBudget.Account> value) {
        GaugeWithCallback.builder().name("tenant_gateway_memory_budget_" + figure + "_bytes").help(help)
                .labelNames("account", "pool")
                .callback(cb -> budget.accounts().forEach(a -> cb.call(value.applyAsLong(a), a.name(), pool(a))))
                .register(registry);
    }

    private static String pool(MemoryBudget.Account account) {
        return account.pool().name().toLowerCase(java.util.Locale.ROOT);
    }
}
