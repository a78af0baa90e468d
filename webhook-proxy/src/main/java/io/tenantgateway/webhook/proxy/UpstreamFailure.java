package io.tenantgateway.webhook.proxy;

import static java.util.Objects.requireNonNull;

import java.util.Locale;

/**
 * Why the upstream webhook gave no usable answer.
 *
 * @param reason the class of failure (a metric label)
 * @param detail one sentence naming the cause, e.g. {@code no answer within 9s}
 */
public record UpstreamFailure(Reason reason, String detail) {

    public enum Reason {
        /** No complete answer within the configured timeout. */
        TIMEOUT,
        /** TCP connect failed (refused, unreachable, DNS). */
        CONNECT,
        /** TLS handshake failed (untrusted or expired certificate, name mismatch, protocol). */
        TLS,
        /** The connection broke after it was established. */
        CONNECTION,
        /** The upstream answered with an HTTP status other than 200. */
        HTTP_STATUS,
        /** The upstream answered 200 with something that is not an AdmissionReview response for our request. */
        INVALID_RESPONSE;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public UpstreamFailure {
        requireNonNull(reason, "reason");
        requireNonNull(detail, "detail");
    }
}
