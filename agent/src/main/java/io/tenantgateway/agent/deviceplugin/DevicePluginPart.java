package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.agent.health.LockMetrics;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.deviceplugin.DevicePlugin;
import io.tenantgateway.deviceplugin.DevicePluginSnapshot;
import io.tenantgateway.hami.NodeVendor;
import java.util.Optional;

/**
 * The kubelet device plugin ({@code --device-plugin=on}): lists the GPUs device registration discovered, and its
 * Allocate completes HAMi's allocation (HAMi-core env and mounts, bind-phase, node lock). When HAMi's or NVIDIA's
 * plugin already serves kubelet's socket it stands aside, and tells device registration to stand aside too.
 */
public final class DevicePluginPart implements Part {
    /** The readiness check: registered with kubelet (or standing aside for another plugin). */
    public static final String CHECK = "device-plugin-registered";

    private final DevicePluginSettings config;
    private volatile DevicePlugin plugin;

    public DevicePluginPart(DevicePluginSettings config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public Plan plan() {
        return Plan.of("device-plugin").withNodeName().check(CHECK).uses(KubernetesPermissions.Use.DEVICE_PLUGIN);
    }

    @Override
    public void start(PartContext context) {
        LockMetrics metrics = context.shared(LockMetrics.class, () -> new LockMetrics(context.registry()));
        // The allocator's failure bookkeeping runs before the plugin serves, and stops after it (closed in reverse):
        // no Allocate call runs once the plugin stopped.
        HamiAllocator hami = new HamiAllocator(context.kubernetes(), config.allocator().withNodeName(
                context.nodeName()), () -> plugin.gpuUuids(), metrics, context.clock());
        hami.start();
        context.own(hami);
        DevicePlugin created = new DevicePlugin(config.plugin(), hami, context.registry(),
                reason -> context.registrationOwnedElsewhere(NodeVendor.NVIDIA, reason), context.version(),
                context.clock());
        context.own(created);
        plugin = created;
        // Probes the socket first: another plugin there makes device registration stand aside before it writes.
        created.start();
        context.deviceDiscovery().subscribe(discovery -> discovery.failure().ifPresentOrElse(
                created::discoveryFailed, () -> created.updateDevices(discovery.devices())));
        context.bind(new HealthCheck(CHECK, () -> {
            DevicePluginSnapshot snapshot = created.snapshot();
            return switch (snapshot.phase()) {
                // Standing aside for HAMi's or NVIDIA's plugin is the right state (logged, doctor says why).
                case REGISTERED, STANDING_ASIDE -> HealthCheck.Result.OK;
                default -> HealthCheck.Result.failed(snapshot.detail());
            };
        }));
    }

    /** The plugin, once started (the status page and {@code /debug/devices} read its snapshot). */
    public Optional<DevicePlugin> plugin() {
        return Optional.ofNullable(plugin);
    }
}
