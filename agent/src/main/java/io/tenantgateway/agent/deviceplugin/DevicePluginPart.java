package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet device plugins ({@code --device-plugin=true}): NVIDIA's lists the GPUs device registration discovered,
 * and its Allocate completes HAMi's allocation (HAMi-core env and mounts, bind-phase, node lock). When HAMi's or
 * NVIDIA's plugin already serves kubelet's socket it stands aside, and tells device registration to stand aside too.
 *
 * <p>In mock mode device registration may also simulate other vendors' devices (Hygon DCU, Ascend chips:
 * {@link DeviceDiscovery#vendorDevices()}). Each vendor seen there gets its own plugin, made on first sight: the
 * vendor's resource on the real plugin's socket name (so a real plugin there is found and stood aside for, vendor by
 * vendor), the vendor's replica IDs, and Allocate with HAMi's steps and the vendor's answer. A vendor missing from a
 * later discovery stays, listing no devices. Every allocator shares one decisions lock, so a pod asking for several
 * vendors completes once (see {@link HamiAllocator}). The vendor plugins' metrics are kept on a registry of their own,
 * not exported: the NVIDIA plugin's metric names carry no resource label, and both would collide.
 */
public final class DevicePluginPart implements Part {
    /** The part's name: its package, readiness-check prefix and docs. */
    public static final String NAME = "device-plugin";
    /** The readiness check: every plugin registered with kubelet (or standing aside for another plugin). */
    public static final String CHECK = "device-plugin-registered";
    private static final Logger log = LoggerFactory.getLogger(DevicePluginPart.class);

    private final DevicePluginSettings config;
    private volatile DevicePlugin plugin;
    private volatile VendorPlugins vendors;

    public DevicePluginPart(DevicePluginSettings config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public Plan plan() {
        return Plan.of(NAME).withNodeName().check(CHECK).uses(KubernetesPermissions.Use.DEVICE_PLUGIN);
    }

    @Override
    public void start(PartContext context) {
        LockMetrics metrics = context.shared(LockMetrics.class, () -> new LockMetrics(context.registry()));
        AllocatorConfig allocatorConfig = config.allocator().withNodeName(context.nodeName());
        // One allocation at a time per node, across every vendor's plugin.
        ReentrantLock decisions = new ReentrantLock();
        // The allocator's failure bookkeeping runs before the plugin serves, and stops after it (closed in reverse):
        // no Allocate call runs once the plugin stopped.
        HamiAllocator hami = new HamiAllocator(context.kubernetes(), allocatorConfig, NodeVendor.NVIDIA,
                HamiAllocator.byUuid(() -> plugin.gpuUuids()), decisions, metrics, context.clock(),
                context.eventCorrelator());
        hami.start();
        context.own(hami);
        DevicePlugin created = new DevicePlugin(config.plugin(), hami, context.registry(),
                reason -> RegistrationOwnedElsewhere.tell(context.channel(RegistrationOwnedElsewhere.CHANNEL),
                        NodeVendor.NVIDIA, reason), context.version(),
                context.clock());
        context.own(created);
        plugin = created;
        // Probes the socket first: another plugin there makes device registration stand aside before it writes.
        created.start();
        VendorPlugins others = new VendorPlugins(context, config.plugin(), allocatorConfig, decisions,
                metrics);
        context.own(others); // closed first: no vendor plugin is made once the part stops
        vendors = others;
        context.channel(DeviceDiscovery.CHANNEL).subscribe(discovery -> {
            discovery.failure().ifPresentOrElse(created::discoveryFailed,
                    () -> created.updateDevices(discovery.devices()));
            others.discovered(discovery);
        });
        context.bind(new HealthCheck(CHECK, this::readiness));
    }

    /** Ready when every plugin is registered, or stands aside for another plugin (logged, doctor says why). */
    private HealthCheck.Result readiness() {
        List<String> waiting = new ArrayList<>();
        for (DevicePlugin each : plugins()) {
            DevicePluginSnapshot snapshot = each.snapshot();
            switch (snapshot.phase()) {
                case REGISTERED, STANDING_ASIDE -> {
                }
                default -> waiting.add(each == plugin ? snapshot.detail()
                        : snapshot.resourceName() + ": " + snapshot.detail());
            }
        }
        return waiting.isEmpty() ? HealthCheck.Result.OK : HealthCheck.Result.failed(String.join("; ", waiting));
    }

    /** NVIDIA's plugin, once started (the status page, {@code /debug/devices} and doctor read its snapshot). */
    public Optional<DevicePlugin> plugin() {
        return Optional.ofNullable(plugin);
    }

    /** Every plugin: NVIDIA's first, then one per simulated vendor in the order they were first seen. */
    public List<DevicePlugin> plugins() {
        List<DevicePlugin> all = new ArrayList<>();
        DevicePlugin nvidia = plugin;
        if (nvidia != null) {
            all.add(nvidia);
        }
        VendorPlugins others = vendors;
        if (others != null) {
            all.addAll(others.plugins());
        }
        return List.copyOf(all);
    }

    /**
     * The simulated vendors' plugins. Discoveries arrive on the publisher's thread, which must not block; a plugin's
     * start probes its socket (up to the dial timeout), so they are applied in order on one thread of their own,
     * made when the first vendor is seen (a pure NVIDIA node never has it).
     */
    private static final class VendorPlugins implements AutoCloseable {
        private final PartContext context;
        private final DevicePluginConfig template;
        private final AllocatorConfig allocatorConfig;
        private final ReentrantLock decisions;
        private final LockMetrics metrics;
        private final Object lock = new Object();
        /** Guarded by {@link #lock}; written on the vendor thread only. */
        private final Map<NodeVendor, VendorPlugin> plugins = new LinkedHashMap<>();
        private ExecutorService thread;
        /** The discovery the vendor thread applies next, {@code null} when none waits. */
        private DeviceDiscovery latest;
        private boolean closed;

        /** @param template NVIDIA's plugin settings: the directory and timings every plugin shares */
        VendorPlugins(PartContext context, DevicePluginConfig template, AllocatorConfig allocatorConfig,
                ReentrantLock decisions, LockMetrics metrics) {
            this.context = context;
            this.template = template;
            this.allocatorConfig = allocatorConfig;
            this.decisions = decisions;
            this.metrics = metrics;
        }

        /**
         * On the publisher's thread: hands the discovery to the vendor thread when there is a vendor to serve. Only
         * the latest one waits there (a newer discovery replaces one not applied yet).
         */
        void discovered(DeviceDiscovery discovery) {
            synchronized (lock) {
                if (closed || (discovery.vendorDevices().isEmpty() && plugins.isEmpty() && thread == null)) {
                    return;
                }
                if (thread == null) {
                    thread = Executors.newSingleThreadExecutor(DaemonThreads.named("device-plugin-vendors"));
                }
                boolean scheduled = latest != null;
                latest = discovery;
                if (scheduled) {
                    return;
                }
                try {
                    thread.execute(this::drain);
                } catch (RejectedExecutionException e) {
                    latest = null; // closing
                }
            }
        }

        private void drain() {
            DeviceDiscovery next;
            synchronized (lock) {
                next = latest;
                latest = null;
            }
            if (next != null) {
                apply(next);
            }
        }

        /** On the vendor thread. */
        private void apply(DeviceDiscovery discovery) {
            if (discovery.failure().isPresent()) {
                plugins().forEach(p -> p.discoveryFailed(discovery.failure().get()));
                return;
            }
            Map<NodeVendor, List<RegisteredDevice>> seen = new LinkedHashMap<>();
            discovery.vendorDevices().forEach(group -> seen.put(group.vendor(), group.devices()));
            for (Map.Entry<NodeVendor, List<RegisteredDevice>> group : seen.entrySet()) {
                VendorPlugin vendor;
                synchronized (lock) {
                    vendor = plugins.get(group.getKey());
                }
                if (vendor == null) {
                    vendor = create(group.getKey());
                    if (vendor == null) {
                        return; // closed meanwhile
                    }
                }
                vendor.list(group.getValue());
            }
            List<VendorPlugin> gone;
            synchronized (lock) {
                gone = plugins.values().stream().filter(p -> !seen.containsKey(p.vendor)).toList();
            }
            gone.forEach(p -> p.list(List.of()));
        }

        /** Makes, records and starts {@code vendor}'s allocator and plugin; {@code null} once closing. */
        private VendorPlugin create(NodeVendor vendor) {
            VendorPlugin created = new VendorPlugin(vendor);
            created.allocator = new HamiAllocator(context.kubernetes(), allocatorConfig, vendor,
                    created::nodeDevices, decisions, metrics, context.clock(), context.eventCorrelator());
            created.plugin = new DevicePlugin(DevicePluginConfig.forVendor(template.directory(), vendor)
                    .withTimingOf(template), created.allocator, new PrometheusRegistry(),
                    reason -> RegistrationOwnedElsewhere.tell(context.channel(
                            RegistrationOwnedElsewhere.CHANNEL), vendor, reason), context.version(), context.clock());
            synchronized (lock) {
                if (closed) {
                    return null;
                }
                plugins.put(vendor, created);
            }
            log.info("device plugin for simulated {} devices resource={} socket={}", vendor.displayName(),
                    vendor.resourceName(), vendor.socketName());
            created.allocator.start();
            try {
                created.plugin.start();
            } catch (RuntimeException e) {
                // Left closed: readiness says so with the plugin's detail.
                log.error("device plugin for {} did not start resource={}", vendor.displayName(),
                        vendor.resourceName(), e);
            }
            return created;
        }

        List<DevicePlugin> plugins() {
            synchronized (lock) {
                return plugins.values().stream().map(p -> p.plugin).toList();
            }
        }

        @Override
        public void close() {
            ExecutorService running;
            synchronized (lock) {
                closed = true;
                running = thread;
            }
            if (running != null) {
                running.shutdownNow();
                try {
                    running.awaitTermination(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            List<VendorPlugin> all;
            synchronized (lock) {
                all = List.copyOf(plugins.values());
            }
            for (VendorPlugin each : all) {
                each.plugin.close();
                each.allocator.close();
            }
        }
    }

    /** One simulated vendor's plugin, its allocator and the devices it lists. */
    private static final class VendorPlugin {
        final NodeVendor vendor;
        volatile HamiAllocator allocator;
        volatile DevicePlugin plugin;
        private volatile Map<String, Long> devices = Map.of();

        VendorPlugin(NodeVendor vendor) {
            this.vendor = vendor;
        }

        /** What the allocator checks entries against: ID → position in the register annotation. */
        Map<String, Long> nodeDevices() {
            return devices;
        }

        /** The devices first (Allocate finds every device kubelet can hand out), then the list for kubelet. */
        void list(List<RegisteredDevice> registered) {
            Map<String, Long> next = new LinkedHashMap<>();
            registered.forEach(d -> next.put(d.id(), d.index()));
            devices = Collections.unmodifiableMap(next);
            plugin.updateVirtualDevices(allocator.virtualDevices(registered));
        }
    }
}
