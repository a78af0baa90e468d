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
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The {@code process_*} and {@code jvm_*} families on {@code /metrics}: what {@code JvmMetrics.builder()} registers,
 * less {@code JvmNativeMemoryMetrics}. That one asks the platform MBean server's DiagnosticCommand bean at
 * registration whether Native Memory Tracking is on; the launcher never turns it on, so it never exports a series, but
 * creating the MBean server registers every platform bean (JMX's server classes, JFR's management and diagnostic
 * commands: about 150 classes and their metadata in every agent). The others read the {@code java.lang.management}
 * beans directly.
 */
public final class JvmInstrumentation {
    private JvmInstrumentation() {
    }

    /** Registers the families once into {@code registry} (the agent's own). */
    public static void register(PrometheusRegistry registry) {
        requireNonNull(registry, "registry");
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
