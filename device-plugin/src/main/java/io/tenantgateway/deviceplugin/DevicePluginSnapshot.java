package io.tenantgateway.deviceplugin;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.time.Instant;

/**
 * What the plugin is doing now, for readiness, {@code /debug/devices} and tests.
 *
 * @param detail the state in words (why it waits, which plugin it stands aside for)
 * @param devices virtual devices listed to kubelet ({@code -1} before the first discovery)
 * @param healthy how many of them are Healthy
 * @param registrations successful Register calls since start
 * @param lastRegistration when the last one succeeded, {@code null} before
 * @param listAndWatchStreams ListAndWatch streams kubelet holds open now
 */
public record DevicePluginSnapshot(Phase phase, String detail, Path socket, String resourceName, int devices,
        int healthy, int registrations, Instant lastRegistration, int listAndWatchStreams) {
    /** Where the plugin is. */
    public enum Phase {
        /** Built, not started. */
        NEW,
        /** The directory or {@code kubelet.sock} is not there yet, or serving/registering failed and is retried. */
        WAITING_FOR_KUBELET,
        /** Registered with kubelet. */
        REGISTERED,
        /** Another device plugin serves the socket: this one does not (HAMi #2076). */
        STANDING_ASIDE,
        /** Closed. */
        CLOSED
    }

    public DevicePluginSnapshot {
        requireNonNull(phase, "phase");
        requireNonNull(detail, "detail");
        requireNonNull(socket, "socket");
        requireNonNull(resourceName, "resourceName");
    }
}
