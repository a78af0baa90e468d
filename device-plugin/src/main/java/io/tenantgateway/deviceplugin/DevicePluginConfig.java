package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.hami.NodeVendor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Where and as what the device plugin serves. Messages name the {@code run} flag that sets the value.
 *
 * @param directory kubelet's device plugin directory ({@code --device-plugin-dir}); {@code kubelet.sock} is in it,
 *     and the plugin's own socket goes there
 * @param resourceName the extended resource served (HAMi's {@code resourceCountName}, default {@code nvidia.com/gpu})
 * @param socketName the plugin's socket file in the directory, the endpoint registered: the real plugin's name, so
 *     that a real plugin serving it is found ({@link SocketProbe}) and stood aside for ({@code nvidia-gpu.sock},
 *     {@code hygon.com_dcunum}, {@code Ascend910B4.sock})
 * @param preferredAllocation whether kubelet asks GetPreferredAllocation first (HAMi #1741; on by default)
 * @param numaTopology whether each device carries its GPU's NUMA node ({@code --device-plugin-numa-topology}, HAMi's
 *     {@code enableNumaTopology}; off by default as in HAMi, because an unknown NUMA node reads as 0)
 * @param dialTimeout how long a dial of {@code kubelet.sock} or the plugin's own socket may take (HAMi: 5 s)
 * @param checkInterval how often the directory is looked at without a file event (a missed inotify event, a
 *     directory that appears later)
 * @param retry waits between failed serve or register attempts
 */
public record DevicePluginConfig(Path directory, String resourceName, String socketName,
        boolean preferredAllocation, boolean numaTopology, Duration dialTimeout, Duration checkInterval,
        Backoff retry) {
    public static final Path DEFAULT_DIRECTORY = Path.of("/var/lib/kubelet/device-plugins");
    public static final String DEFAULT_RESOURCE = "nvidia.com/gpu";
    /** kubelet's own socket in the directory. */
    public static final String KUBELET_SOCKET = "kubelet.sock";
    /** The API version registered with. */
    public static final String VERSION = "v1beta1";
    /** sun_path holds 108 bytes with the terminating NUL. */
    public static final int MAX_SOCKET_PATH_BYTES = 107;

    // Kubernetes' qualified name: an optional DNS-subdomain prefix, '/', a name of alphanumerics, '-', '_', '.'.
    private static final Pattern EXTENDED_RESOURCE =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/"
                    + "[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    public DevicePluginConfig {
        requireNonNull(directory, "directory");
        requireNonNull(resourceName, "resourceName");
        requireNonNull(socketName, "socketName");
        requireNonNull(dialTimeout, "dialTimeout");
        requireNonNull(checkInterval, "checkInterval");
        requireNonNull(retry, "retry");
        if (!directory.isAbsolute()) {
            throw new ConfigException("--device-plugin-dir", directory, "an absolute path, kubelet's "
                    + DEFAULT_DIRECTORY);
        }
        if (!EXTENDED_RESOURCE.matcher(resourceName).matches() || resourceName.startsWith("kubernetes.io/")
                || resourceName.contains(".kubernetes.io/") || resourceName.startsWith("requests.")) {
            throw new IllegalArgumentException("resourceCountName: " + resourceName + " (expected: an extended"
                    + " resource name outside kubernetes.io, e.g. " + DEFAULT_RESOURCE + ")");
        }
        if (dialTimeout.isNegative() || dialTimeout.isZero()) {
            throw new IllegalArgumentException("dialTimeout: " + dialTimeout + " (expected: > 0)");
        }
        if (checkInterval.isNegative() || checkInterval.isZero()) {
            throw new IllegalArgumentException("checkInterval: " + checkInterval + " (expected: > 0)");
        }
        if (retry.maxAttempts() != Backoff.UNLIMITED) {
            throw new IllegalArgumentException("retry: " + retry + " (expected: unlimited attempts)");
        }
        if (socketName.isEmpty() || socketName.contains("/") || socketName.startsWith(".")
                || socketName.equals(KUBELET_SOCKET)) {
            throw new IllegalArgumentException("socketName: " + socketName + " (expected: a file name in the"
                    + " directory, not hidden and not " + KUBELET_SOCKET + ")");
        }
        int length = directory.resolve(socketName).toString().getBytes(StandardCharsets.UTF_8).length;
        if (length > MAX_SOCKET_PATH_BYTES) {
            throw new ConfigException("--device-plugin-dir", directory, "a directory whose socket path "
                    + directory.resolve(socketName) + " fits a Unix socket: at most "
                    + MAX_SOCKET_PATH_BYTES + " bytes, got " + length);
        }
    }

    /** kubelet's directory, {@code nvidia.com/gpu}, preferred allocation on, no topology, HAMi's 5 s dial. */
    public static DevicePluginConfig defaults() {
        return of(DEFAULT_DIRECTORY, DEFAULT_RESOURCE);
    }

    public static DevicePluginConfig of(Path directory, String resourceName) {
        return new DevicePluginConfig(directory, resourceName, socketName(resourceName), true, false,
                Duration.ofSeconds(5), Duration.ofSeconds(5), Backoff.exponential(Duration.ofSeconds(1))
                        .withCap(Duration.ofSeconds(30)).withJitter(0.2));
    }

    /**
     * A simulated vendor's plugin, as the real one registers: the vendor's resource and socket
     * ({@link NodeVendor#socketName()}), no GetPreferredAllocation (Hygon's and Ascend's plugins offer none), no
     * topology; the rest as {@link #of}.
     */
    public static DevicePluginConfig forVendor(Path directory, NodeVendor vendor) {
        requireNonNull(vendor, "vendor");
        return new DevicePluginConfig(directory, vendor.resourceName(), vendor.socketName(), false, false,
                Duration.ofSeconds(5), Duration.ofSeconds(5), Backoff.exponential(Duration.ofSeconds(1))
                        .withCap(Duration.ofSeconds(30)).withJitter(0.2));
    }

    /** This plugin's settings from {@code template} (the check interval, dial timeout and retry tests tune). */
    public DevicePluginConfig withTimingOf(DevicePluginConfig template) {
        return new DevicePluginConfig(directory, resourceName, socketName, preferredAllocation, numaTopology,
                template.dialTimeout(), template.checkInterval(), template.retry());
    }

    public DevicePluginConfig withNumaTopology(boolean enabled) {
        return new DevicePluginConfig(directory, resourceName, socketName, preferredAllocation, enabled, dialTimeout,
                checkInterval, retry);
    }

    public DevicePluginConfig withPreferredAllocation(boolean enabled) {
        return new DevicePluginConfig(directory, resourceName, socketName, enabled, numaTopology, dialTimeout,
                checkInterval, retry);
    }

    public DevicePluginConfig withCheckInterval(Duration interval) {
        return new DevicePluginConfig(directory, resourceName, socketName, preferredAllocation, numaTopology,
                dialTimeout, interval, retry);
    }

    public DevicePluginConfig withRetry(Backoff backoff) {
        return new DevicePluginConfig(directory, resourceName, socketName, preferredAllocation, numaTopology,
                dialTimeout, checkInterval, backoff);
    }

    /**
     * HAMi's NVIDIA socket name for a resource: {@code nvidia-<part after "/">.sock} ({@code nvidia-gpu.sock}), so
     * tools and docs match.
     */
    public static String socketName(String resourceName) {
        return "nvidia-" + resourceName.substring(resourceName.indexOf('/') + 1) + ".sock";
    }

    public Path socket() {
        return directory.resolve(socketName());
    }

    public Path kubeletSocket() {
        return directory.resolve(KUBELET_SOCKET);
    }
}
