package io.tenantgateway.agent.deviceplugin;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.policy.HamiCoreSettings;
import io.tenantgateway.agent.hami.DeviceConfigFile;
import io.tenantgateway.webhook.policy.NvidiaConfig;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * {@code run}'s device plugin flags ({@code --device-plugin=true}: kubelet's device plugin API for the registered GPUs,
 * and HAMi's Allocate), as {@code DevicePluginSettings}: its {@link DevicePluginConfig} and its
 * {@link AllocatorConfig}. A picocli mixin; that the plugin needs device registration is {@code run}'s rule, which
 * composes the two. {@code run}'s package uses this one, so the part is made by the constructor {@code run} passes
 * ({@link #settings}).
 */
public final class DevicePluginFlags {
    /** What {@code --device-plugin} is without a value ({@code --device-plugin} alone), as for every boolean flag. */
    private static final String ON = "true";

    // A String, not a boolean: the first spelling, on|off, is still accepted (enabled()); help shows true|false.
    @Option(names = "--device-plugin", arity = "0..1", defaultValue = "false", fallbackValue = ON, order = 7,
            paramLabel = "true|false",
            description = "Serve kubelet's device plugin API for the registered GPUs, as HAMi's plugin does: kubelet"
                    + " learns nvidia.com/gpu, and Allocate completes HAMi's allocation (HAMi-core env and mounts,"
                    + " bind-phase, node lock). Needs --device-source. Default: ${DEFAULT-VALUE}.")
    String devicePlugin;

    @Option(names = "--device-plugin-dir", defaultValue = "/var/lib/kubelet/device-plugins", order = 7,
            paramLabel = "DIR", description = "kubelet's device plugin directory (kubelet.sock). Default:"
                    + " ${DEFAULT-VALUE}.")
    Path devicePluginDir;

    @Option(names = "--device-plugin-numa-topology", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 7, paramLabel = "true|false", description = "Give every listed device its GPU's NUMA node (HAMi's"
                    + " enableNumaTopology). Default: ${DEFAULT-VALUE}.")
    boolean devicePluginNumaTopology;

    @Option(names = "--device-plugin-host-root", defaultValue = "/", hidden = true, order = 7, paramLabel = "DIR",
            description = "Where the host's /usr/local/vgpu and /tmp/vgpulock are seen from the agent (the"
                    + " DaemonSet mounts them at their host paths); the lab uses its work directory."
                    + " Default: ${DEFAULT-VALUE}.")
    Path devicePluginHostRoot;

    /**
     * {@code --device-plugin=true|false}, as every boolean flag is spelled; also {@code on|off}, its first spelling,
     * which existing argument lists and {@code --config} files still use.
     */
    public boolean enabled() {
        return switch (devicePlugin.strip().toLowerCase(Locale.ROOT)) {
            case ON, "on" -> true;
            case "false", "off" -> false;
            default -> throw new ConfigException("--device-plugin", devicePlugin, "true or false");
        };
    }

    /** {@code --device-plugin-host-root}: where the host's {@code /usr/local} and {@code /tmp} are seen from. */
    public Path hostRoot() {
        return devicePluginHostRoot.toAbsolutePath().normalize();
    }

    /**
     * The device plugin, checked (with {@code --device-plugin=true}).
     *
     * @param nodeName this node
     * @param deviceConfigFile HAMi's device config ({@code --device-config}, read once, on first use): the resource
     *     name and the memory scaling
     * @param podFieldSelector whether pod lists send {@code spec.nodeName=<node>} ({@code --pod-field-selector})
     */
    public DevicePluginSettings settings(String nodeName, DeviceConfigFile deviceConfigFile,
            boolean podFieldSelector) {
        NvidiaConfig nvidia = deviceConfigFile.nvidia();
        DevicePluginConfig plugin;
        try {
            plugin = DevicePluginConfig.of(devicePluginDir.toAbsolutePath().normalize(),
                    nvidia.resourceCountName()).withNumaTopology(devicePluginNumaTopology);
        } catch (IllegalArgumentException e) {
            // DevicePluginConfig names --device-plugin-dir itself; a bad resource name came from the device config.
            String dir = "--device-plugin-dir: ";
            throw e.getMessage().startsWith(dir) ? ConfigException.of("--device-plugin-dir",
                    e.getMessage().substring(dir.length()), e)
                    : ConfigException.of("--device-config", "nvidia." + e.getMessage(), e);
        }
        AllocatorConfig allocator = AllocatorConfig.defaults(nodeName)
                .withHamiCore(HamiCoreSettings.DEFAULTS.withDeviceMemoryScaling(
                        nvidia.deviceMemoryScaling()))
                .withHostRoot(devicePluginHostRoot.toAbsolutePath().normalize())
                .withPodFieldSelector(podFieldSelector);
        return new DevicePluginSettings(plugin, allocator);
    }
}
