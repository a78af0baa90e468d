package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/**
 * One vendor's mapping block of {@code device-config.yaml} ({@code cambricon:}, {@code mthreads:}, …), reduced to
 * the resource-name keys the webhook uses. A key that is absent reads as {@code ""} (Go's zero value: the backend
 * then matches nothing by that name).
 */
public record VendorBlock(Map<String, String> values) {
    public static final VendorBlock EMPTY = new VendorBlock(Map.of());

    public VendorBlock {
        values = Map.copyOf(requireNonNull(values, "values"));
    }

    /** The value of a key, trimmed; {@code ""} when absent. */
    public String name(String key) {
        String value = values.get(key);
        return value == null ? "" : value.trim();
    }

    /** The first non-empty of the keys' values, else {@code fallback}. */
    public String firstOf(String fallback, String... keys) {
        for (String key : keys) {
            String value = name(key);
            if (!value.isEmpty()) {
                return value;
            }
        }
        return fallback;
    }
}
