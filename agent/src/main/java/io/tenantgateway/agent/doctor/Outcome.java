package io.tenantgateway.agent.doctor;

import java.util.Locale;

/** How one probe stage or doctor check ended. */
public enum Outcome {
    /** It worked. */
    PASS,
    /** It worked, but something is likely to bite later (a token about to expire, an unexpected audience). */
    WARN,
    /** It failed; the result carries why and what to do. */
    FAIL,
    /** Not run: not configured, or an earlier step it depends on failed. */
    SKIP;

    /** Lower-case name for JSON output. */
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }
}
