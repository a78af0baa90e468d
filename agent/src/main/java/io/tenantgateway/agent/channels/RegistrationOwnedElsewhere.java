package io.tenantgateway.agent.channels;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.part.Channel;
import io.tenantgateway.hami.NodeVendor;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The vendors whose node registration another device plugin owns on this node, each with why (HAMi's or NVIDIA's
 * plugin serves kubelet's {@code nvidia-gpu.sock}, Hygon's {@code hygon.com_dcunum}, an Ascend chip's
 * {@code <chip>.sock}): device registration stops writing exactly those vendors' register annotation, handshake and
 * capacity, and goes on with the others. It only grows, so the last value on {@link #CHANNEL} names every vendor told
 * so far whatever the order in which parts start; publish through {@link #tell}, which adds one vendor.
 *
 * @param reasons why, per vendor, in the order told; the first reason told for a vendor stays
 */
public record RegistrationOwnedElsewhere(Map<NodeVendor, String> reasons) {
    /** No vendor is owned elsewhere. */
    public static final RegistrationOwnedElsewhere NONE = new RegistrationOwnedElsewhere(Map.of());
    /** The device plugin → device registration. */
    public static final Channel.Key<RegistrationOwnedElsewhere> CHANNEL = Channel.Key.of(
            "registration-owned-elsewhere");

    public RegistrationOwnedElsewhere {
        reasons = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(reasons, "reasons")));
    }

    /** This value plus {@code vendor}; itself when {@code vendor} is already in it. */
    public RegistrationOwnedElsewhere with(NodeVendor vendor, String reason) {
        requireNonNull(vendor, "vendor");
        requireNonNull(reason, "reason");
        if (reasons.containsKey(vendor)) {
            return this;
        }
        Map<NodeVendor, String> more = new LinkedHashMap<>(reasons);
        more.put(vendor, reason);
        return new RegistrationOwnedElsewhere(more);
    }

    /**
     * Tells device registration, on {@code channel}, that another device plugin registers {@code vendor}'s devices on
     * this node ({@code reason}: which, where): publishes the last value plus {@code vendor}. Any thread.
     */
    public static void tell(Channel<RegistrationOwnedElsewhere> channel, NodeVendor vendor, String reason) {
        requireNonNull(vendor, "vendor");
        requireNonNull(reason, "reason");
        channel.update(NONE, owned -> owned.with(vendor, reason));
    }

    /** Why {@code vendor}'s registration is owned elsewhere; empty when it is ours. */
    public Optional<String> reason(NodeVendor vendor) {
        return Optional.ofNullable(reasons.get(requireNonNull(vendor, "vendor")));
    }
}
