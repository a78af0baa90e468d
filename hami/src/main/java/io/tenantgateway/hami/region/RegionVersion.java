package io.tenantgateway.hami.region;

/** The two layouts of HAMi-core's shared region that {@link SharedRegion} reads. */
public enum RegionVersion {
    /**
     * Older HAMi-core, before the region carried a version: no version fields, no seqlock, no last-kernel time,
     * 1168-byte process slots. Recognised by the file's size alone.
     */
    V0,
    /** HAMi-core v1.x ({@code major_version} 1, v1.2 at the time of writing): 1960-byte slots with a seqlock. */
    V1
}
