package io.tenantgateway.webhook.proxy;

import io.tenantgateway.common.config.ConfigException;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** What the webhook answers when the upstream webhook cannot: HAMi's own setup fails open silently; we choose. */
public enum FailurePolicy {
    /** Errored 503 naming the upstream and the cause: the pod is rejected with a message that says why. */
    FAIL_CLOSED("fail-closed"),
    /** Allowed unchanged, with an admission warning naming the upstream and the cause. */
    FAIL_OPEN("fail-open"),
    /** Answered by the built-in HAMi mutator (same decisions as the upstream), with a warning. */
    FALLBACK("fallback");

    private final String label;

    FailurePolicy(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static FailurePolicy parse(String text) {
        String normalized = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        for (FailurePolicy policy : values()) {
            if (policy.label.equals(normalized)) {
                return policy;
            }
        }
        throw new ConfigException("--upstream-failure-policy", "'" + text + "'",
                "one of " + Arrays.stream(values()).map(FailurePolicy::label).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return label;
    }
}
