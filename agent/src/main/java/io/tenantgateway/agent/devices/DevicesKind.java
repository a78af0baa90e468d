package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.agent.doctor.PartDoctor;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.hami.GpuDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Device registration's entry in the list of parts: {@code devices=} in the effective configuration, and
 * {@code doctor}'s {@code devices} line (the device source's discovery, with the simulated vendors' devices, which it
 * leaves on {@link DeviceDiscovery#CHANNEL} for the device plugin's line).
 */
public final class DevicesKind implements PartKind, PartDoctor {
    private final Optional<DeviceRegistrationConfig> config;

    public DevicesKind(Optional<DeviceRegistrationConfig> config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public String name() {
        return DevicesPart.NAME;
    }

    @Override
    public Optional<Part> part() {
        return config.<Part>map(devices -> new DevicesPart(devices));
    }

    @Override
    public void describe(Map<String, String> out) {
        out.put("devices", config.map(d -> d.source().flagValue() + " split=" + d.splitCount() + " handshake="
                + GoDuration.format(d.handshakeInterval()) + (d.nodeCapacity() == null ? ""
                : " node-capacity=" + String.join(",", d.nodeCapacity().resources()))).orElse("off"));
    }

    @Override
    public List<DoctorCheck> doctor(DoctorStage stage, DoctorContext context) {
        return stage == DoctorStage.DEVICES ? List.of(devices(context)) : List.of();
    }

    private DoctorCheck devices(DoctorContext context) {
        if (config.isEmpty()) {
            return DoctorCheck.skip("devices", "--device-source=none");
        }
        // Simulated Hygon and Ascend devices (--mock-devices), as their plugins register them: the device plugin's
        // line probes their sockets.
        List<SimulatedVendor> vendors = DeviceRegistrar.simulatedVendors(config.get());
        context.channel(DeviceDiscovery.CHANNEL).publish(DeviceDiscovery.found(List.of(), vendors.stream()
                .map(v -> new DeviceDiscovery.VendorDevices(v.vendor(), v.devices())).toList()));
        var source = config.get().createSource().orElseThrow();
        List<GpuDevice> found;
        try {
            found = source.discover();
        } catch (DeviceDiscoveryException e) {
            String fix = switch (e.reason()) {
                case NVIDIA_SMI_MISSING -> "install the NVIDIA driver utilities on the node and mount nvidia-smi"
                        + " into the pod, or set --nvidia-smi-path";
                case DRIVER_UNAVAILABLE -> "load the NVIDIA kernel driver (nvidia-smi on the node must work);"
                        + " a user-space/kernel version mismatch needs a reboot or a driver reinstall";
                case NO_DEVICES -> "this node has no GPU: run the agent with --device-source=none here, or use a"
                        + " nodeSelector for GPU nodes";
                case NVIDIA_SMI_TIMEOUT -> "nvidia-smi hangs: check the GPUs (dmesg, Xid errors); persistence mode"
                        + " helps";
                default -> "run nvidia-smi on the node and compare with the message";
            };
            return DoctorCheck.fail("devices", source.kind() + ": " + e.getMessage(), fix);
        }
        List<String> lines = new ArrayList<>(found.stream().map(d -> "[" + d.index() + "] " + d.type() + " "
                + d.devmemMiB() + " MiB, split " + d.count() + (d.healthy() ? "" : ", UNHEALTHY") + " (" + d.id()
                + ")").toList());
        StringBuilder summary = new StringBuilder(source.kind() + ": " + found.size() + " GPU(s)");
        for (SimulatedVendor vendor : vendors) {
            summary.append(", ").append(vendor.vendor().displayName()).append(": ").append(vendor.devices().size());
            vendor.devices().forEach(d -> lines.add(vendor.vendor().displayName() + " [" + d.index() + "] " + d.type()
                    + " " + d.devmem() + " MiB, split " + d.count() + (d.health() ? "" : ", UNHEALTHY") + " ("
                    + d.id() + ") in " + vendor.vendor().registerKey()));
        }
        return new DoctorCheck("devices", Outcome.PASS, summary.toString(), "", lines);
    }
}
