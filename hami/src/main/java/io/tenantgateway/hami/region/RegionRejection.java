package io.tenantgateway.hami.region;

/** Why {@link SharedRegion} did not trust a region. The caller skips the file and counts the reason. */
public enum RegionRejection {
    /** The first four bytes are not HAMi-core's magic 19920718: not a region, or not initialised yet. */
    WRONG_MAGIC,
    /** Shorter than the smallest layout (v0), or the file shrank while it was read. */
    TRUNCATED,
    /** As long as a v1 region but {@code major_version} is not 1: a layout this reader does not know. */
    UNSUPPORTED_VERSION,
    /** A process slot's seqlock stayed odd or kept changing over every read of the slot: a writer was busy. */
    TORN
}
