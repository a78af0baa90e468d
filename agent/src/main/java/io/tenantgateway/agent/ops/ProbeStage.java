package io.tenantgateway.agent.ops;

import java.util.Locale;

/**
 * The steps of {@code tenant-gateway probe}, in order, with the exit code each one's failure produces. The codes are
 * part of the CLI contract (documented in the README and in {@code probe --help}); 0 is success, 2 bad flags.
 */
public enum ProbeStage {
    /** Connect to konnectivity-server's frontend (Unix socket, or TCP with TLS). */
    SERVER(3, "connect to konnectivity-server"),
    /** DIAL_REQ → DIAL_RSP (gRPC) or CONNECT → 200 (http-connect): a tunnel to the target through an agent. */
    DIAL(4, "open a tunnel to the target through an agent"),
    /** TLS handshake with the target inside the tunnel; chain, names and expiry checked. */
    TLS(5, "TLS handshake with the target"),
    /** POST a dry-run AdmissionReview and read the answer. */
    WEBHOOK(6, "POST a dry-run AdmissionReview");

    /** Exit code when the webhook answered but refused the pod ({@code allowed: false}). */
    public static final int WEBHOOK_REFUSED_EXIT_CODE = 7;

    private final int exitCode;
    private final String description;

    ProbeStage(int exitCode, String description) {
        this.exitCode = exitCode;
        this.description = description;
    }

    public int exitCode() {
        return exitCode;
    }

    public String description() {
        return description;
    }

    /** Lower-case name used in output. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
