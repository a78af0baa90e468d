package io.tenantgateway.tunnel.endpoint;

import static java.util.Objects.requireNonNull;

/**
 * Why a dial to a target failed. The message is what goes back to the server in DIAL_RSP; it follows Go's
 * {@code net.Dial} wording ({@code dial tcp 10.0.0.1:443: connect: connection refused}) because operators grep for it.
 */
public final class DialFailure extends Exception {
    private static final long serialVersionUID = 1L;

    /** Failure classes; the first two are upstream's {@code endpoint_dial_failure_total{reason}} values. */
    public enum Reason {
        TIMEOUT("timeout"), UNKNOWN("unknown"), DENIED("denied");

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private final Reason reason;
    private final String rule;

    public DialFailure(Reason reason, String message, Throwable cause) {
        this(reason, "", message, cause);
    }

    /** A failure with the policy rule that decided it ({@link Reason#DENIED}; for the metric, never the peer). */
    public DialFailure(Reason reason, String rule, String message, Throwable cause) {
        super(message, cause, false, false);
        this.reason = requireNonNull(reason, "reason");
        this.rule = requireNonNull(rule, "rule");
    }

    /** The policy rule that denied the dial; empty for other reasons. */
    public String rule() {
        return rule;
    }

    public Reason reason() {
        return reason;
    }
}
