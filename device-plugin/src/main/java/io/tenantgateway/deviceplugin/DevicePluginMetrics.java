package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The plugin's metrics, on the owner's registry (one live plugin per registry; {@link #unregister()} on close):
 * <ul>
 *   <li>{@code tenant_gateway_device_plugin_registrations_total{result}}: Register calls to kubelet, success or
 *       failure</li>
 *   <li>{@code tenant_gateway_device_plugin_allocate_total{result}}: Allocate calls (one per container), ok or
 *       error</li>
 *   <li>{@code tenant_gateway_device_plugin_devices{health}}: the virtual devices listed to kubelet, Healthy or
 *       Unhealthy</li>
 *   <li>{@code tenant_gateway_device_plugin_standing_aside}: 1 while another device plugin serves the socket and this
 *       one does not start (HAMi #2076)</li>
 * </ul>
 */
final class DevicePluginMetrics {
    static final String SUCCESS = "success";
    static final String FAILURE = "failure";
    static final String OK = "ok";
    static final String ERROR = "error";
    static final String HEALTHY = "Healthy";
    static final String UNHEALTHY = "Unhealthy";

    private final PrometheusRegistry registry;
    private final Counter registrations;
    private final Counter allocations;
    private final Gauge devices;
    private final Gauge standingAside;

    DevicePluginMetrics(PrometheusRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        registrations = Counter.builder().name("tenant_gateway_device_plugin_registrations_total")
                .help("Register calls of the device plugin to kubelet, by result").labelNames("result").build();
        allocations = Counter.builder().name("tenant_gateway_device_plugin_allocate_total")
                .help("Allocate calls from kubelet (one per container), by result").labelNames("result").build();
        devices = Gauge.builder().name("tenant_gateway_device_plugin_devices")
                .help("Virtual devices (<GPU UUID>-<i>) listed to kubelet, by health").labelNames("health").build();
        standingAside = Gauge.builder().name("tenant_gateway_device_plugin_standing_aside")
                .help("1 while another device plugin serves this resource and the agent's stands aside").build();
        registrations.initLabelValues(SUCCESS);
        registrations.initLabelValues(FAILURE);
        allocations.initLabelValues(OK);
        allocations.initLabelValues(ERROR);
        devices.labelValues(HEALTHY).set(0);
        devices.labelValues(UNHEALTHY).set(0);
    }

    void register() {
        registry.register(registrations);
        registry.register(allocations);
        registry.register(devices);
        registry.register(standingAside);
    }

    void unregister() {
        registry.unregister(registrations);
        registry.unregister(allocations);
        registry.unregister(devices);
        registry.unregister(standingAside);
    }

    void registration(boolean success) {
        registrations.labelValues(success ? SUCCESS : FAILURE).inc();
    }

    void allocate(boolean ok) {
        allocations.labelValues(ok ? OK : ERROR).inc();
    }

    void devices(long healthy, long unhealthy) {
        devices.labelValues(HEALTHY).set(healthy);
        devices.labelValues(UNHEALTHY).set(unhealthy);
    }

    void standingAside(boolean aside) {
        standingAside.set(aside ? 1 : 0);
    }
}
