package io.tenantgateway.agent.health;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryPoolAllocationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.function.Predicate;

/**
 * The {@code process_*} and {@code jvm_*} families on {@code /metrics}: what {@code JvmMetrics.builder()} registers,
 * less {@code JvmNativeMemoryMetrics}, made at the first scrape rather than at start.
 *
 * <p>Less {@code JvmNativeMemoryMetrics}: it asks the platform MBean server's DiagnosticCommand bean whether Native
 * Memory Tracking is on; the launcher never turns it on, so it never exports a series, but creating the MBean server
 * registers every platform bean (JMX's server classes, JFR's management beans and diagnostic commands: about 150
 * classes in every agent). At the first scrape: the families read the {@code java.lang.management} beans (about 140
 * JDK classes, 70 of the instrumentation), which nothing else on the tunnel path needs; an agent nobody scrapes never
 * loads them (TunnelOnlyClassLoadingIT). The values are the JVM's own totals either way, except
 * {@code jvm_memory_pool_allocated_bytes_total}: it counts what the collections after the first scrape freed.
 *
 * <p>Thread-safe: the first scrapes race for one initialisation.
 */
public final class JvmInstrumentation implements MultiCollector {
    private final Object lock = new Object();
    private volatile PrometheusRegistry families;

    private JvmInstrumentation() {
    }

    /** Registers the families into {@code registry} (the agent's own), to be made at its first scrape. */
    public static void register(PrometheusRegistry registry) {
        requireNonNull(registry, "registry").register(new JvmInstrumentation());
    }

    @Override
    public MetricSnapshots collect() {
        return families().scrape();
    }

    @Override
    public MetricSnapshots collect(Predicate<String> includedNames) {
        return families().scrape(includedNames);
    }

    private PrometheusRegistry families() {
        PrometheusRegistry made = families;
        if (made == null) {
            synchronized (lock) {
                made = families;
                if (made == null) {
                    made = new PrometheusRegistry();
                    registerAll(made);
                    families = made;
                }
            }
        }
        return made;
    }

    private static void registerAll(PrometheusRegistry registry) {
        JvmThreadsMetrics.builder().register(registry);
        JvmBufferPoolMetrics.builder().register(registry);
        JvmClassLoadingMetrics.builder().register(registry);
        JvmCompilationMetrics.builder().register(registry);
        JvmGarbageCollectorMetrics.builder().register(registry);
        JvmMemoryPoolAllocationMetrics.builder().register(registry);
        JvmMemoryMetrics.builder().register(registry);
        JvmRuntimeInfoMetric.builder().register(registry);
        ProcessMetrics.builder().register(registry);
    }
}
