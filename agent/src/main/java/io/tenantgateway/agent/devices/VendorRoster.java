package io.tenantgateway.agent.devices;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.channels.RegistrationOwnedElsewhere;
import io.tenantgateway.hami.NodeVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Whose devices the registrar writes: the vendors this node has (NVIDIA, unless a mock inventory has none, then the
 * simulated Hygon and Ascend vendors) less those another device plugin registers ({@link #standAside}).
 *
 * <p>Thread-safe: the vendors standing aside are an immutable {@link RegistrationOwnedElsewhere} (its copy-on-write
 * map) published through a volatile field, written under {@code this}; any thread may tell, the round thread and
 * readers read.
 */
final class VendorRoster {
    private final boolean nvidia;
    private final List<SimulatedVendor> vendors;
    private volatile RegistrationOwnedElsewhere standingAside = RegistrationOwnedElsewhere.NONE;

    /**
     * @param nvidia  the node has NVIDIA GPUs to register
     * @param vendors the simulated vendors (mock mode only); empty on a pure-NVIDIA node
     */
    VendorRoster(boolean nvidia, List<SimulatedVendor> vendors) {
        this.nvidia = nvidia;
        this.vendors = List.copyOf(requireNonNull(vendors, "vendors"));
    }

    /** The node has NVIDIA GPUs to register. */
    boolean nvidia() {
        return nvidia;
    }

    /** Every simulated vendor of the node, standing aside or not. */
    List<SimulatedVendor> vendors() {
        return vendors;
    }

    /**
     * Records that another plugin registers {@code vendor}'s devices.
     *
     * @return false when it already stood aside (the first reason is kept)
     */
    synchronized boolean standAside(NodeVendor vendor, String reason) {
        RegistrationOwnedElsewhere more = standingAside.with(vendor, reason);
        if (more == standingAside) {
            return false;
        }
        standingAside = more;
        return true;
    }

    /** The vendors another device plugin registers, with why, in the order told (empty when none). */
    Map<NodeVendor, String> standingAside() {
        return standingAside.reasons();
    }

    /** The vendors this node's devices belong to: NVIDIA (unless a mock inventory has none), then the simulated. */
    List<NodeVendor> present() {
        List<NodeVendor> present = new ArrayList<>(vendors.size() + 1);
        if (nvidia) {
            present.add(NodeVendor.NVIDIA);
        }
        vendors.forEach(v -> present.add(v.vendor()));
        return present;
    }

    boolean present(NodeVendor vendor) {
        return vendor.equals(NodeVendor.NVIDIA) ? nvidia : vendors.stream().anyMatch(v -> v.vendor().equals(vendor));
    }

    /** Whether NVIDIA's GPUs are ours to register now. */
    boolean nvidiaActive() {
        return nvidia && !standingAside.reasons().containsKey(NodeVendor.NVIDIA);
    }

    /** The simulated vendors ours to register now. */
    List<SimulatedVendor> activeVendors() {
        Map<NodeVendor, String> aside = standingAside.reasons();
        return aside.isEmpty() ? vendors : vendors.stream().filter(v -> !aside.containsKey(v.vendor())).toList();
    }

    /** Whether anything is still ours to register: false once every vendor of the node stands aside. */
    boolean anyActive() {
        return nvidiaActive() || !activeVendors().isEmpty();
    }

    /** The display names of the present vendors not standing aside. */
    List<String> stillRegistering() {
        Map<NodeVendor, String> aside = standingAside.reasons();
        return present().stream().filter(v -> !aside.containsKey(v)).map(NodeVendor::displayName).toList();
    }

    /** {@code NVIDIA registered by another device plugin: <reason>; …} for the present vendors standing aside. */
    String asideDetail() {
        Map<NodeVendor, String> aside = standingAside.reasons();
        List<String> parts = new ArrayList<>();
        for (NodeVendor vendor : present()) {
            String reason = aside.get(vendor);
            if (reason != null) {
                parts.add(vendor.displayName() + " registered by another device plugin: " + reason);
            }
        }
        return String.join("; ", parts);
    }
}
