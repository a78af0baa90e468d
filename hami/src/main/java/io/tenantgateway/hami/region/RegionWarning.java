package io.tenantgateway.hami.region;

/**
 * Something in a region that no HAMi-core writes, which {@link SharedRegion} bounded instead of trusting. The
 * snapshot is still usable; a warning says the file was damaged or forged.
 */
public enum RegionWarning {
    /** {@code proc_num} was negative or above 1024; it was clamped to 0..1024. */
    PROC_NUM_CLAMPED,
    /** {@code device_num} was above 16 (as an unsigned number); only the first 16 devices were read. */
    DEVICE_NUM_CLAMPED,
    /** A UUID held a byte outside printable ASCII (or a backslash); it was escaped as {@code \xNN}. */
    UUID_ESCAPED,
    /** A UUID had no NUL within its 96 bytes; all 96 were taken. */
    UUID_UNTERMINATED,
    /** A 64-bit value or a sum exceeded {@link Long#MAX_VALUE}; it was saturated there. */
    VALUE_SATURATED
}
