package io.tenantgateway.hami;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The HAMi release whose behaviour is reproduced where the releases differ: the webhook's admission decisions, the
 * legacy-text decoder's errors, v2.9's {@code "devicepairscore":{}} in written JSON, which capacity-derived vendors
 * exist. The differences are small but visible to users, so an operator running an older HAMi scheduler can keep its
 * behaviour byte for byte. Chosen by {@code --hami-compat} ({@link #fromText}).
 */
public enum HamiRelease {
    /**
     * HAMi v2.10.0 (default): init containers are mutated too, a privileged container in a pod that asks for a
     * HAMi resource denies the pod, and {@code gpumem-percentage} outside 0..100 is an error; quota counts per-GPU
     * values times the GPU count, init containers as the largest single one.
     */
    V2_10("v2.10"),
    /**
     * HAMi v2.9.0: only app containers are mutated, privileged containers are skipped silently, no percentage
     * validation; quota counts only containers asking for exactly one GPU.
     */
    V2_9("v2.9");

    private final String label;

    HamiRelease(String label) {
        this.label = label;
    }

    /** The spelling used on the command line and in logs: {@code v2.10}, {@code v2.9}. */
    public String label() {
        return label;
    }

    public boolean mutatesInitContainers() {
        return this == V2_10;
    }

    public boolean deniesPrivilegedContainers() {
        return this == V2_10;
    }

    public boolean validatesResourceValues() {
        return this == V2_10;
    }

    /** Accepts {@code v2.10}, {@code 2.10}, {@code v2.10.0} and the same for v2.9; empty for anything else. */
    public static Optional<HamiRelease> fromText(String text) {
        String normalized = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        if (!normalized.startsWith("v")) {
            normalized = "v" + normalized;
        }
        if (normalized.endsWith(".0") && normalized.chars().filter(c -> c == '.').count() == 2) {
            normalized = normalized.substring(0, normalized.length() - 2);
        }
        for (HamiRelease release : values()) {
            if (release.label.equals(normalized)) {
                return Optional.of(release);
            }
        }
        return Optional.empty();
    }

    /** {@code v2.10, v2.9}: every label, for error messages. */
    public static String labels() {
        return Arrays.stream(values()).map(HamiRelease::label).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return label;
    }
}
