package io.tenantgateway.agent.testing;

import io.fabric8.kubernetes.api.model.Quantity;
import java.util.HashMap;
import java.util.Map;

/** A Node's capacity or allocatable as plain strings, for assertions. */
public final class Quantities {
    private Quantities() {
    }

    /** {@code quantities} as name → its text; {@code null} quantities left out, a {@code null} map empty. */
    public static Map<String, String> present(Map<String, Quantity> quantities) {
        Map<String, String> out = new HashMap<>();
        if (quantities != null) {
            quantities.forEach((k, v) -> {
                if (v != null) {
                    out.put(k, v.toString());
                }
            });
        }
        return out;
    }
}
