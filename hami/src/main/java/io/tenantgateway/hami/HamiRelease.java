package io.tenantgateway.hami;

import java.util.Locale;

/**
 * The HAMi release whose behaviour a codec reproduces where the releases differ (the legacy-text decoder's errors,
 * v2.9's {@code "devicepairscore":{}} in written JSON, which capacity-derived vendors exist).
 */
public enum HamiRelease {
    V2_9("v2.9"),
    V2_10("v2.10");

    private final String label;

    HamiRelease(String label) {
        this.label = label;
    }

    /** {@code v2.9} or {@code v2.10}, as {@code --hami-compat} spells it. */
    public String label() {
        return label;
    }

    /**
     * Reads {@code v2.9} or {@code v2.10} (also without the {@code v}).
     *
     * @throws IllegalArgumentException for anything else
     */
    public static HamiRelease parse(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        for (HamiRelease release : values()) {
            if (release.label.equals(t) || release.label.substring(1).equals(t)) {
                return release;
            }
        }
        throw new IllegalArgumentException(text + " (expected: v2.9 or v2.10)");
    }
}
