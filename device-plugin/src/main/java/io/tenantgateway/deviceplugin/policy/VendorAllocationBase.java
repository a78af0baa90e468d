package io.tenantgateway.deviceplugin.policy;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.NodeVendor;

/**
 * What every vendor's {@link VendorAllocation} holds: its vendor. Vendor-neutral, so loading it (with the chosen
 * vendor's class) loads no other vendor's class.
 */
abstract class VendorAllocationBase implements VendorAllocation {
    private final NodeVendor vendor;

    VendorAllocationBase(NodeVendor vendor) {
        this.vendor = requireNonNull(vendor, "vendor");
    }

    @Override
    public final NodeVendor vendor() {
        return vendor;
    }
}
