package io.tenantgateway.agent.monitor;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What the monitor's last scan found: each GPU container's usage and limits, and how the scan went. Immutable; the
 * metrics, the status page and {@code /debug/monitor} read the latest one.
 *
 * @param at when the scan ran; empty before the first
 * @param containers the containers of pods on this node, with a region or an allocation annotation
 * @param directories the cache directories found
 * @param waitingForCleanup directories without a live pod, kept until their grace has passed (or the API answers)
 * @param podsError why the last pod list failed, when it did (the cleanup then removes nothing)
 */
public record MonitorSnapshot(Optional<Instant> at, List<ContainerUsage> containers, int directories,
        List<String> waitingForCleanup, Optional<String> podsError) {
    /** Before the first scan. */
    public static final MonitorSnapshot NONE = new MonitorSnapshot(Optional.empty(), List.of(), 0, List.of(),
            Optional.empty());

    public MonitorSnapshot {
        requireNonNull(at, "at");
        containers = List.copyOf(containers);
        waitingForCleanup = List.copyOf(waitingForCleanup);
        requireNonNull(podsError, "podsError");
    }
}
