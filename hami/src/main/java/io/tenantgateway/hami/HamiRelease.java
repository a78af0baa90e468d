package io.tenantgateway.hami;

/**
 * The HAMi release whose behaviour a codec reproduces where the releases differ (the legacy-text decoder's errors,
 * v2.9's {@code "devicepairscore":{}} in written JSON, which capacity-derived vendors exist). The flag that chooses
 * it, {@code --hami-compat}, is parsed by the webhook's {@code HamiCompat}: one spelling for both.
 */
public enum HamiRelease {
    V2_9,
    V2_10
}
