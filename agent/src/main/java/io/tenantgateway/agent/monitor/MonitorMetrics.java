package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.tenantgateway.hami.region.DeviceUsage;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * HAMi's vGPU monitor container metrics, with HAMi's names and labels, from the latest {@link MonitorSnapshot}: the
 * current names ({@code hami_*}: labels {@code namespace, pod, container, vdevice_index, device_uuid}) and the legacy
 * ones HAMi's Grafana dashboards use ({@code vGPU_*}, {@code Device_*}: labels
 * {@code podnamespace, podname, ctrname, vdeviceid, deviceuuid}). The two limit families carry one more label,
 * {@code limit_source}: {@code region} when HAMi-core's region gave the limit, {@code annotation} when only the pod's
 * allocation annotation did (before the container's first CUDA call; HAMi shows nothing then). Usage families come
 * from regions only. Made at each scrape from the snapshot; the scan never waits for a scrape.
 */
final class MonitorMetrics implements MultiCollector {
    private static final String[] LABELS = {"namespace", "pod", "container", "vdevice_index", "device_uuid"};
    private static final String[] LEGACY = {"podnamespace", "podname", "ctrname", "vdeviceid", "deviceuuid"};
    private static final String LIMIT_SOURCE = "limit_source";

    private final Supplier<MonitorSnapshot> latest;
    private final Clock clock;

    MonitorMetrics(Supplier<MonitorSnapshot> latest, Clock clock) {
        this.latest = requireNonNull(latest, "latest");
        this.clock = requireNonNull(clock, "clock");
    }

    @Override
    public MetricSnapshots collect() {
        MonitorSnapshot snapshot = latest.get();
        long now = clock.instant().getEpochSecond();
        Family used = new Family("hami_vgpu_memory_used_bytes", "vGPU device memory usage in bytes");
        Family limit = new Family("hami_vgpu_memory_limit_bytes", "vGPU device memory limit in bytes");
        Family deviceMemory = new Family("hami_container_device_memory_bytes",
                "Container device memory usage in bytes");
        Family utilization = new Family("hami_container_device_utilization_ratio",
                "Container device SM utilization (the sum of its processes' percent, as HAMi exports it)");
        Family context = new Family("hami_vgpu_memory_context_bytes", "vGPU device memory used by contexts");
        Family module = new Family("hami_vgpu_memory_module_bytes", "vGPU device memory used by modules");
        Family buffer = new Family("hami_vgpu_memory_buffer_bytes", "vGPU device memory used by data buffers");
        Family lastKernel = new Family("hami_container_last_kernel_elapsed_seconds",
                "Seconds since the container's last kernel launch");
        Family legacyUsed = new Family("vGPU_device_memory_usage_in_bytes", "vGPU device usage");
        Family legacyLimit = new Family("vGPU_device_memory_limit_in_bytes", "vGPU device limit");
        Family legacyDesc = new Family("Device_memory_desc_of_container", "Container device memory description");
        Family legacyUtil = new Family("Device_utilization_desc_of_container", "Container device utilization"
                + " description");
        Family legacyKernel = new Family("Device_last_kernel_of_container", "Container device last kernel"
                + " description");
        for (ContainerUsage container : snapshot.containers()) {
            boolean region = container.source() == ContainerUsage.Source.REGION;
            for (DeviceUsage device : container.devices()) {
                String[] values = {container.namespace(), container.pod(), container.container(),
                    Integer.toString(device.index()), device.uuidLabel()};
                Labels current = Labels.of(LABELS, values);
                Labels legacy = Labels.of(LEGACY, values);
                String source = container.source().label();
                limit.add(current.add(LIMIT_SOURCE, source), device.limitBytes());
                legacyLimit.add(legacy.add(LIMIT_SOURCE, source), device.limitBytes());
                if (!region) {
                    continue;
                }
                used.add(current, device.usedBytes());
                deviceMemory.add(current, device.usedBytes());
                utilization.add(current, device.smUtilSum());
                context.add(current, device.contextBytes());
                module.add(current, device.moduleBytes());
                buffer.add(current, device.dataBytes());
                legacyUsed.add(legacy, device.usedBytes());
                legacyDesc.add(legacy.merge(Labels.of("context", Long.toString(device.contextBytes()),
                        "module", Long.toString(device.moduleBytes()), "data", Long.toString(device.dataBytes()),
                        "offset", "0")), device.usedBytes());
                legacyUtil.add(legacy, device.smUtilSum());
                if (container.lastKernelTime() > 0) {
                    long elapsed = Math.max(0, now - container.lastKernelTime());
                    lastKernel.add(current, elapsed);
                    legacyKernel.add(legacy, elapsed);
                }
            }
        }
        List<MetricSnapshot> out = new ArrayList<>();
        for (Family family : List.of(used, limit, deviceMemory, utilization, context, module, buffer, lastKernel,
                legacyUsed, legacyLimit, legacyDesc, legacyUtil, legacyKernel)) {
            out.add(family.snapshot());
        }
        return new MetricSnapshots(out);
    }

    @Override
    public List<String> getPrometheusNames() {
        return List.of("hami_vgpu_memory_used_bytes", "hami_vgpu_memory_limit_bytes",
                "hami_container_device_memory_bytes", "hami_container_device_utilization_ratio",
                "hami_vgpu_memory_context_bytes", "hami_vgpu_memory_module_bytes", "hami_vgpu_memory_buffer_bytes",
                "hami_container_last_kernel_elapsed_seconds", "vGPU_device_memory_usage_in_bytes",
                "vGPU_device_memory_limit_in_bytes", "Device_memory_desc_of_container",
                "Device_utilization_desc_of_container", "Device_last_kernel_of_container");
    }

    /** One gauge family being filled. */
    private static final class Family {
        private final GaugeSnapshot.Builder builder;

        Family(String name, String help) {
            builder = GaugeSnapshot.builder().name(name).help(help);
        }

        void add(Labels labels, double value) {
            builder.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(value).build());
        }

        GaugeSnapshot snapshot() {
            return builder.build();
        }
    }
}
