package io.tenantgateway.hami.region;

import static java.util.Objects.requireNonNull;

/**
 * The outcome of {@link SharedRegion#read}: a snapshot, or the reason the region was not trusted and a text that
 * names the value found and the value expected.
 *
 * @param snapshot what was read; null when rejected
 * @param rejection why the region was skipped; null when read
 * @param detail the rejection's text; null when read
 */
public record RegionRead(RegionSnapshot snapshot, RegionRejection rejection, String detail) {
    public RegionRead {
        if ((snapshot == null) == (rejection == null)) {
            throw new IllegalArgumentException("snapshot/rejection: " + snapshot + "/" + rejection
                    + " (expected: exactly one)");
        }
        if (rejection != null) {
            requireNonNull(detail, "detail");
        } else if (detail != null) {
            throw new IllegalArgumentException("detail: \"" + detail + "\" (expected: none for a snapshot)");
        }
    }

    static RegionRead ok(RegionSnapshot snapshot) {
        return new RegionRead(requireNonNull(snapshot, "snapshot"), null, null);
    }

    static RegionRead rejected(RegionRejection rejection, String detail) {
        return new RegionRead(null, requireNonNull(rejection, "rejection"), detail);
    }

    public boolean isOk() {
        return snapshot != null;
    }
}
