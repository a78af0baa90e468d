package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.hami.RegisteredDevice;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the device registration has done so far, for readiness and a {@code /debug/devices} view.
 * Immutable; nullable fields are marked.
 *
 * @param nodeName           the Node being registered
 * @param source             the device source kind ({@code mock}, {@code nvidia-smi})
 * @param ready              the scheduler currently sees our devices: registered, the last discovery
 *                           worked and our last handshake write is younger than 60 s
 * @param devices            the NVIDIA devices in the register annotation we last wrote (empty before that,
 *                           after deregistration, and while NVIDIA's registration is owned elsewhere)
 * @param registerAnnotation the value of that annotation ({@code ""} when none)
 * @param lastHandshake      when we last wrote the handshake(s); {@code null} before the first write
 * @param lastFailure        why the most recent attempt failed; {@code null} when it succeeded
 * @param lastError          the message of that failure; {@code null} when it succeeded
 * @param lastErrorAt        when that failure happened; {@code null} when it succeeded
 * @param vendors            the simulated Hygon and Ascend vendors we last registered, in inventory order (empty on
 *                           an NVIDIA node)
 * @param ownedElsewhere     the vendors whose registration another device plugin owns, so we stopped writing it:
 *                           vendor ({@code NVIDIA}, {@code Hygon}, {@code Ascend910B4}) to why
 */
public record DeviceRegistrationSnapshot(String nodeName, String source, boolean ready, List<GpuDevice> devices,
                                         String registerAnnotation, Instant lastHandshake,
                                         FailureReason lastFailure, String lastError, Instant lastErrorAt,
                                         List<VendorRegistration> vendors, Map<String, String> ownedElsewhere) {
    public DeviceRegistrationSnapshot {
        requireNonNull(nodeName, "nodeName");
        requireNonNull(source, "source");
        devices = List.copyOf(devices);
        requireNonNull(registerAnnotation, "registerAnnotation");
        vendors = List.copyOf(vendors);
        ownedElsewhere = Collections.unmodifiableMap(new LinkedHashMap<>(ownedElsewhere));
    }

    /** A snapshot of NVIDIA's registration alone, no vendor owned elsewhere. */
    public DeviceRegistrationSnapshot(String nodeName, String source, boolean ready, List<GpuDevice> devices,
                                      String registerAnnotation, Instant lastHandshake, FailureReason lastFailure,
                                      String lastError, Instant lastErrorAt) {
        this(nodeName, source, ready, devices, registerAnnotation, lastHandshake, lastFailure, lastError,
                lastErrorAt, List.of(), Map.of());
    }

    /**
     * One simulated vendor's registration as last written.
     *
     * @param vendor             the vendor (its register key: {@code vendor.registerKey()})
     * @param devices            its devices
     * @param registerAnnotation the register annotation's value
     */
    public record VendorRegistration(NodeVendor vendor, List<RegisteredDevice> devices, String registerAnnotation) {
        public VendorRegistration {
            requireNonNull(vendor, "vendor");
            devices = List.copyOf(devices);
            requireNonNull(registerAnnotation, "registerAnnotation");
        }
    }
}
