package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The registrar's view of the node's GPUs: what its {@link DeviceSource} found, kept for the rescan interval and
 * asked again after it. A failed or empty rescan leaves nothing kept, so stale devices are never registered as
 * fresh.
 *
 * <p>Not thread-safe: the registrar's round thread owns it. {@link #devices()} may block (the source's exec or reads).
 */
final class DeviceDiscovery {
    private final DeviceSource source;
    private final Duration rescanInterval;
    private final Clock clock;

    private List<GpuDevice> discovered;
    private Instant discoveredAt;

    DeviceDiscovery(DeviceSource source, Duration rescanInterval, Clock clock) {
        this.source = requireNonNull(source, "source");
        this.rescanInterval = requireNonNull(rescanInterval, "rescanInterval");
        this.clock = requireNonNull(clock, "clock");
    }

    /**
     * The devices, discovered again when the rescan interval has passed since the last discovery (or none is kept).
     *
     * @throws DeviceDiscoveryException the source's, or {@link FailureReason#NO_DEVICES} for an empty answer
     */
    List<GpuDevice> devices() throws DeviceDiscoveryException {
        Instant now = clock.instant();
        if (discovered == null || Duration.between(discoveredAt, now).compareTo(rescanInterval) >= 0) {
            discovered = null; // a failed rescan must not leave stale devices registered as fresh
            List<GpuDevice> devices = source.discover();
            if (devices.isEmpty()) {
                throw new DeviceDiscoveryException(FailureReason.NO_DEVICES,
                        source.kind() + " source returned no devices (expected: at least one GPU)");
            }
            discovered = devices;
            discoveredAt = now;
        }
        return discovered;
    }
}
