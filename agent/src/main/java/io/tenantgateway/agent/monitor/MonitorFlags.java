package io.tenantgateway.agent.monitor;

import io.tenantgateway.agent.part.PartFlags;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.agent.part.SharedSettings;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code run}'s vGPU monitor flags, as {@link MonitorConfig}: what HAMi's {@code vgpu-monitor} container does,
 * inside the agent. A picocli mixin that {@code run} adds from the list of parts; the monitor runs where devices are
 * registered.
 */
public final class MonitorFlags implements PartFlags {
    /** The options' {@code order}: their section of {@code run --help}. */
    private static final int HELP_ORDER = 8;

    @Option(names = "--monitor", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = HELP_ORDER,
            paramLabel = "true|false",
            description = "Read each GPU container's HAMi-core usage (memory, utilisation, limits) and export HAMi's"
                    + " vGPU monitor metrics; remove the cache directories of pods that are gone. Runs where devices"
                    + " are registered (--device-source). Default: ${DEFAULT-VALUE}.")
    boolean monitor;

    @Option(names = "--monitor-listen", defaultValue = ":9394", order = HELP_ORDER, paramLabel = "[HOST]:PORT|off",
            description = "A second metrics listener with only HAMi's monitor metrics, on HAMi's vgpu-monitor port,"
                    + " for HAMi's dashboards and ServiceMonitors unchanged; off: none (the agent's /metrics has them"
                    + " too). Default: ${DEFAULT-VALUE} (all interfaces).")
    String listen;

    @Option(names = "--monitor-scan-interval", defaultValue = "5s", order = HELP_ORDER, paramLabel = "DURATION",
            description = "How often the containers' usage is read and this node's pods are listed. Default:"
                    + " ${DEFAULT-VALUE}.")
    String scanInterval;

    @Option(names = "--monitor-cache-grace", defaultValue = "5m", order = HELP_ORDER, paramLabel = "DURATION",
            description = "How long a container's HAMi-core cache directory is kept once no live pod has it;"
                    + " nothing is removed while the API does not answer. Default: ${DEFAULT-VALUE}.")
    String cacheGrace;

    @Override
    public int helpOrder() {
        return HELP_ORDER;
    }

    @Override
    public String helpTitle() {
        return "vGPU monitor (on when devices are registered)";
    }

    /** The monitor's entry: on with {@code --monitor} (the default) where devices are registered. */
    @Override
    public PartKind kind(SharedSettings shared) {
        return new MonitorKind(shared.devicesRegistered() && enabled()
                ? Optional.of(config(shared.nodeName().orElseThrow(), shared.hostRoot(), shared.podFieldSelector()))
                : Optional.empty());
    }

    /** Whether {@code --monitor} leaves it on (it still needs devices). */
    public boolean enabled() {
        return monitor;
    }

    /**
     * The monitor, checked.
     *
     * @param nodeName this node
     * @param hostRoot where the host's {@code /usr/local} is seen from ({@code --device-plugin-host-root}): the
     *     containers' directories are {@code usr/local/vgpu/containers} under it
     * @param podFieldSelector whether pod lists send the node's field selector
     */
    public MonitorConfig config(String nodeName, Path hostRoot, boolean podFieldSelector) {
        return new MonitorConfig(nodeName, hostRoot.resolve("usr/local/vgpu/containers"), listen(listen),
                GoDuration.parse("--monitor-scan-interval", scanInterval),
                GoDuration.parse("--monitor-cache-grace", cacheGrace), podFieldSelector,
                MonitorConfig.DEFAULT_MAX_CONTAINERS);
    }

    static Optional<InetSocketAddress> listen(String value) {
        String text = value == null ? "" : value.strip();
        if (text.toLowerCase(Locale.ROOT).equals("off")) {
            return Optional.empty();
        }
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            throw new ConfigException("--monitor-listen", value, "[HOST]:PORT, e.g. :9394 or 127.0.0.1:9394, or off");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException("--monitor-listen", value, "[HOST]:PORT with a port 0..65535, or off");
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException("--monitor-listen", value, "[HOST]:PORT with a port 0..65535, or off");
        }
        return Optional.of(InetSocketAddress.createUnresolved(host.isEmpty() ? "0.0.0.0" : host, port));
    }
}
