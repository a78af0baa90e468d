package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The vGPU monitor's settings ({@link MonitorFlags}).
 *
 * @param nodeName this node: the pods whose containers are read
 * @param containersDir HAMi-core's per-container directories as the agent sees them (the host's
 *     {@code /usr/local/vgpu/containers})
 * @param listen the HAMi-compatible metrics listener ({@code --monitor-listen}), or empty when off
 * @param scanInterval how often the directories are read and the pods listed (HAMi: 5 s)
 * @param cacheGrace how long a directory without a live pod is kept (HAMi: 5 minutes)
 * @param podFieldSelector whether pod lists send {@code spec.nodeName=NODE} (off only against fabric8's CRUD mock)
 * @param maxContainers at most this many directories are read per scan (the rest are counted, not read)
 */
public record MonitorConfig(String nodeName, Path containersDir, Optional<InetSocketAddress> listen,
        Duration scanInterval, Duration cacheGrace, boolean podFieldSelector, int maxContainers) {
    /** HAMi's vGPU monitor port. */
    public static final int HAMI_PORT = 9394;
    /** HAMi's scan interval. */
    public static final Duration DEFAULT_SCAN_INTERVAL = Duration.ofSeconds(5);
    /**
     * Directories read per scan: a node runs at most 110 pods by default (a few hundred when raised), each GPU
     * container one directory.
     */
    public static final int DEFAULT_MAX_CONTAINERS = 1024;

    public MonitorConfig {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(containersDir, "containersDir");
        requireNonNull(listen, "listen");
        requireNonNull(scanInterval, "scanInterval");
        requireNonNull(cacheGrace, "cacheGrace");
        if (scanInterval.compareTo(Duration.ofMillis(100)) < 0 || scanInterval.compareTo(Duration.ofHours(1)) > 0) {
            throw new ConfigException("--monitor-scan-interval", scanInterval, "between 100ms and 1h");
        }
        if (cacheGrace.isNegative() || cacheGrace.compareTo(Duration.ofDays(7)) > 0) {
            throw new ConfigException("--monitor-cache-grace", cacheGrace, "between 0s and 168h");
        }
        if (maxContainers < 1) {
            throw new IllegalArgumentException("maxContainers: " + maxContainers + " (expected: > 0)");
        }
    }
}
