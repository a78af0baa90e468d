package io.tenantgateway.webhook;

import io.tenantgateway.webhook.policy.Decision;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamFailure;
import java.net.URI;
import java.util.function.Supplier;

/**
 * Every failure the webhook can meet, mapped to its status code and answer in one place.
 *
 * <p>Requests that are not readable AdmissionReviews get that code as the HTTP status too (the API server never
 * sends them, and a client must not mistake them for an admission answer); everything else is an admission-level
 * answer (HTTP 200) whose {@code status.code} says what happened, like HAMi's.
 */
final class FailureMapping {
    /** An upstream that gave no usable answer, under {@code fail-closed}. */
    static final int UPSTREAM_FAILED = 503;

    private FailureMapping() {
    }

    /** Requests rejected before any admission decision, with their HTTP status. */
    enum Rejection {
        WRONG_CONTENT_TYPE(400),
        BODY_TOO_LARGE(413),
        /**
         * The review alone needs more working memory to decide (its parsed pod, the mutated copy, the patch) than the
         * webhook's whole memory account holds: retrying cannot help.
         */
        DECISION_TOO_LARGE(413),
        EMPTY_BODY(400),
        MALFORMED_JSON(400),
        NOT_AN_ADMISSION_REVIEW(400),
        /** The webhook's memory budget cannot hold the request now (answered with {@code Retry-After}). */
        MEMORY_BUDGET(429),
        /** A bug on our side: the message names it, the stack trace stays in our log. */
        INTERNAL_ERROR(500);

        final int status;

        Rejection(int status) {
            this.status = status;
        }

        Decision decision(String message) {
            return Decision.errored(status, message);
        }
    }

    /** The answer when the upstream failed, by policy. {@code builtIn} runs only for {@code fallback}. */
    static Decision upstreamFailed(FailurePolicy policy, URI upstream, UpstreamFailure failure,
            Supplier<Decision> builtIn) {
        String cause = "upstream webhook " + upstream + " failed: " + failure.detail();
        return switch (policy) {
            case FAIL_CLOSED -> Decision.errored(UPSTREAM_FAILED, cause);
            case FAIL_OPEN -> Decision.allowedUnchanged("")
                    .withWarning(cause + "; admitted without mutation (failure policy fail-open)");
            case FALLBACK -> builtIn.get()
                    .withWarning(cause + "; answered by the built-in HAMi mutator (failure policy fallback)");
        };
    }
}
