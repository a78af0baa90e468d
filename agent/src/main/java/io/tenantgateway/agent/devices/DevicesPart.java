package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.agent.deviceplugin.DevicePluginPart;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.part.Channel;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartContext;
import io.tenantgateway.agent.part.Plan;
import io.tenantgateway.hami.GpuDevice;
import java.util.List;
import java.util.Optional;

/**
 * Device registration ({@code --device-source}): discovers this node's GPUs and keeps HAMi's register annotation and
 * handshake on the node, as HAMi's device plugin does. What it discovers is published for the device plugin; when
 * another plugin owns a vendor's annotation (HAMi's or NVIDIA's on kubelet's socket, a vendor's own plugin on its
 * socket) it stands aside for that vendor.
 */
public final class DevicesPart implements Part {
    /** The part's name: its package, readiness-check prefix and docs. */
    public static final String NAME = "devices";
    /** The readiness check: devices registered (or another plugin registers them). */
    public static final String CHECK = "devices-registered";

    private final DeviceRegistrationConfig config;
    private volatile DeviceRegistrar registrar;

    public DevicesPart(DeviceRegistrationConfig config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public Plan plan() {
        Plan plan = Plan.of(NAME).withNodeName()
                // The device plugin probes kubelet's socket first: when another plugin owns the node's register
                // annotation, registration stands aside before it writes. Its name only (a constant, inlined by
                // javac): the device plugin's classes stay out of this package.
                .after(DevicePluginPart.NAME).check(CHECK).uses(KubernetesPermissions.Use.DEVICE_REGISTRATION);
        if (config.advertiseCapacity()) {
            plan = plan.uses(KubernetesPermissions.Use.GPU_CAPACITY);
        }
        return config.nodeCapacity() != null ? plan.uses(KubernetesPermissions.Use.NODE_CAPACITY) : plan;
    }

    @Override
    public void start(PartContext context) {
        DeviceRegistrationConfig resolved = config.withNodeName(context.nodeName());
        DeviceSource gpus = resolved.createSource().orElseThrow();
        // Simulated Hygon and Ascend devices (mock mode): fixed, so published at once, with the mock GPUs (a pure
        // function of the inventory too), whether or not NVIDIA's GPUs are ours to register.
        List<SimulatedVendor> vendors = DeviceRegistrar.simulatedVendors(resolved);
        Channel<DeviceDiscovery> discovery = context.channel(DeviceDiscovery.CHANNEL);
        List<DeviceDiscovery.VendorDevices> vendorDevices = vendors.stream()
                .map(v -> new DeviceDiscovery.VendorDevices(v.vendor(), v.devices())).toList();
        if (!vendors.isEmpty()) {
            discovery.publish(DeviceDiscovery.found(
                    gpus instanceof MockDeviceSource mock ? mock.discover() : List.of(), vendorDevices));
        }
        // kubelet (through the device plugin) and the register annotation list the same discovery.
        DeviceSource source = new ObservedDeviceSource(gpus,
                new ObservedDeviceSource.Observer() {
                    @Override
                    public void discovered(List<GpuDevice> found) {
                        discovery.publish(DeviceDiscovery.found(found, vendorDevices));
                    }

                    @Override
                    public void failed(String reason) {
                        discovery.publish(DeviceDiscovery.failed(reason));
                    }
                });
        DeviceRegistrar created = new DeviceRegistrar(resolved, source, vendors, context.kubernetes(),
                context.clock(), context.registry());
        context.own(created);
        // Per vendor: the device plugin (or a vendor's own plugin on its socket) says whose registration is not ours.
        context.channel(RegistrationOwnedElsewhere.CHANNEL)
                .subscribe(owned -> owned.reasons().forEach(created::standAside));
        context.bind(created.readinessCheck());
        registrar = created;
        created.start();
    }

    /** The registrar, once started (the status page and {@code /debug/devices} read its snapshot). */
    public Optional<DeviceRegistrar> registrar() {
        return Optional.ofNullable(registrar);
    }
}
