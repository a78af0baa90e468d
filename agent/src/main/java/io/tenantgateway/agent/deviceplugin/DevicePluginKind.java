package io.tenantgateway.agent.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoopGroup;
import io.tenantgateway.agent.channels.DeviceDiscovery;
import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.agent.doctor.PartDoctor;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.SocketProbe;
import io.tenantgateway.deviceplugin.UnixSockets;
import io.tenantgateway.tunnel.transport.Transports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The device plugin's entry in the list of parts: {@code device-plugin=} in the effective configuration, and, where it
 * is on, {@code doctor}'s {@code device-plugin} line: the kubelet side (the directory, kubelet.sock, and who serves
 * each plugin socket: HAMi #2076), for the simulated vendors device registration's line left on
 * {@link DeviceDiscovery#CHANNEL} too.
 */
public final class DevicePluginKind implements PartKind, PartDoctor {
    private final Optional<DevicePluginSettings> config;

    public DevicePluginKind(Optional<DevicePluginSettings> config) {
        this.config = requireNonNull(config, "config");
    }

    @Override
    public String name() {
        return DevicePluginPart.NAME;
    }

    @Override
    public Optional<Part> part() {
        return config.<Part>map(plugin -> new DevicePluginPart(plugin));
    }

    @Override
    public void describe(Map<String, String> out) {
        out.put("device-plugin", config.map(d -> d.plugin().socket() + " resource=" + d.plugin().resourceName())
                .orElse("off"));
    }

    /** Only where it is on: a skipped line on every other node says nothing. */
    @Override
    public List<DoctorCheck> doctor(DoctorStage stage, DoctorContext context) {
        return stage == DoctorStage.KUBELET && config.isPresent() ? List.of(devicePlugin(context)) : List.of();
    }

    private DoctorCheck devicePlugin(DoctorContext context) {
        DevicePluginConfig plugin = config.get().plugin();
        EventLoopGroup group = context.group();
        Duration timeout = context.timeout();
        if (!UnixSockets.available() || !Transports.isEpoll(group)) {
            return DoctorCheck.fail("device-plugin", "Unix domain sockets need Netty's native epoll, which does not"
                    + " load here", "run the agent on Linux (x86_64 or aarch64) from the image, which carries the"
                    + " epoll natives");
        }
        if (!Files.isDirectory(plugin.directory())) {
            return DoctorCheck.fail("device-plugin", "kubelet's device plugin directory " + plugin.directory()
                    + " does not exist here", "mount the host's /var/lib/kubelet/device-plugins into the pod"
                    + " (hostPath) and pass that path as --device-plugin-dir");
        }
        SocketProbe.Result probe = SocketProbe.probe(plugin.socket(), group, timeout);
        if (probe.kind() == SocketProbe.Kind.FOREIGN) {
            return DoctorCheck.fail("device-plugin", probe.detail() + ": the agent's device plugin does not start"
                    + " and the agent does not write hami.io/node-nvidia-register (two plugins must not both serve "
                    + plugin.resourceName() + ", HAMi #2076)", "remove HAMi's device plugin (helm upgrade hami"
                    + " --set devicePlugin.enabled=false, or keep its DaemonSet off these nodes) or NVIDIA's"
                    + " (nvidia-device-plugin-daemonset) from this node, then restart the agent; or keep that plugin"
                    + " and run the agent here with --device-plugin=false --device-source=none");
        }
        boolean kubelet = Files.exists(plugin.kubeletSocket());
        String state = switch (probe.kind()) {
            case OURS -> probe.detail();
            case STALE -> probe.detail() + "; the agent removes it when it serves";
            default -> "nobody serves " + plugin.socket() + " yet (the agent does once it runs)";
        };
        if (!kubelet) {
            return DoctorCheck.warn("device-plugin", state + "; no " + plugin.kubeletSocket(), "the kubelet is not"
                    + " running, or " + plugin.directory() + " is not its device plugin directory (kubelet's"
                    + " --root-dir + /device-plugins)");
        }
        String summary = state + "; " + plugin.kubeletSocket() + " present, resource " + plugin.resourceName();
        // Simulated Hygon and Ascend (--mock-devices): each vendor's plugin has its real plugin's socket; a real
        // plugin there means the simulated one stands aside for that vendor only.
        List<String> lines = new ArrayList<>();
        List<String> asides = new ArrayList<>();
        List<DeviceDiscovery.VendorDevices> vendors = context.channel(DeviceDiscovery.CHANNEL).last()
                .map(DeviceDiscovery::vendorDevices).orElse(List.of());
        for (DeviceDiscovery.VendorDevices vendor : vendors) {
            Path socket = plugin.directory().resolve(vendor.vendor().socketName());
            SocketProbe.Result vendorProbe = SocketProbe.probe(socket, group, timeout);
            String name = vendor.vendor().displayName();
            lines.add(name + " (" + vendor.vendor().resourceName() + "): " + switch (vendorProbe.kind()) {
                case FOREIGN -> vendorProbe.detail() + ": the simulated " + name + " plugin stands aside and the agent"
                        + " does not write " + vendor.vendor().registerKey();
                case OURS, STALE -> vendorProbe.detail();
                default -> "nobody serves " + socket + " yet (the agent does once it runs)";
            });
            if (vendorProbe.kind() == SocketProbe.Kind.FOREIGN) {
                asides.add(name);
            }
        }
        if (!asides.isEmpty()) {
            return new DoctorCheck("device-plugin", Outcome.WARN, summary + "; a real plugin serves " + String.join(
                    ", ", asides), "simulated devices stand aside where the real plugin runs: drop those presets from"
                    + " --mock-devices on this node, or the real plugin if the hardware is not there", lines);
        }
        return new DoctorCheck("device-plugin", Outcome.PASS, summary, "", lines);
    }
}
