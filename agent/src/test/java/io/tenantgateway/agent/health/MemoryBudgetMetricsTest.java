package io.tenantgateway.agent.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.common.memory.MemoryBudget;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MemoryBudgetMetricsTest {
    @Test
    void everyAccountIsOnTheScrapeIncludingOnesMadeAfterRegistration() throws IOException {
        MemoryBudget budget = MemoryBudget.fromLimits(48L << 20, 32L << 20);
        PrometheusRegistry registry = new PrometheusRegistry();
        MemoryBudgetMetrics.register(budget, registry);
        MemoryBudget.Account bodies = budget.account("webhook-bodies", MemoryBudget.Pool.HEAP, 0.25, 0);
        bodies.tryReserve(1000);
        bodies.tryReserve(100L << 20);

        String text = scrape(registry);
        assertThat(text)
                .contains("tenant_gateway_memory_budget_limit_bytes{account=\"webhook-bodies\",pool=\"heap\"} 1.2582912E7")
                .contains("tenant_gateway_memory_budget_used_bytes{account=\"webhook-bodies\",pool=\"heap\"} 1000.0")
                .contains("tenant_gateway_memory_budget_peak_bytes{account=\"webhook-bodies\",pool=\"heap\"} 1000.0")
                .contains("tenant_gateway_memory_budget_refusals_total{account=\"webhook-bodies\",pool=\"heap\"} 1.0");
    }

    private static String scrape(PrometheusRegistry registry) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }
}
