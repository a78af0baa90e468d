package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

/** Outcome of a certificate check, with a message that says why (on success: what chained to what). */
public record VerificationResult(boolean valid, String message) {
    public VerificationResult {
        requireNonNull(message, "message");
    }

    static VerificationResult ok(String message) {
        return new VerificationResult(true, message);
    }

    static VerificationResult failed(String message) {
        return new VerificationResult(false, message);
    }
}
