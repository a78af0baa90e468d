package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import java.time.Instant;
import java.util.List;

/**
 * What the device registration has done so far, for readiness and a {@code /debug/devices} view.
 * Immutable; nullable fields are marked.
 *
 * @param nodeName           the Node being registered
 * @param source             the device source kind ({@code mock}, {@code nvidia-smi})
 * @param ready              the scheduler currently sees our devices: registered, the last discovery
 *                           worked and our last handshake write is younger than 60 s
 * @param devices            the devices in the register annotation we last wrote (empty before that
 *                           and after deregistration)
 * @param registerAnnotation the value of that annotation ({@code ""} when none)
 * @param lastHandshake      when we last wrote the handshake; {@code null} before the first write
 * @param lastFailure        why the most recent attempt failed; {@code null} when it succeeded
 * @param lastError          the message of that failure; {@code null} when it succeeded
 * @param lastErrorAt        when that failure happened; {@code null} when it succeeded
 */
public record DeviceRegistrationSnapshot(String nodeName, String source, boolean ready, List<GpuDevice> devices,
                                         String registerAnnotation, Instant lastHandshake,
                                         FailureReason lastFailure, String lastError, Instant lastErrorAt) {
    public DeviceRegistrationSnapshot {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(source, "source");
        devices = List.copyOf(devices);
        requireNonNull(registerAnnotation, "registerAnnotation");
    }
}
