package io.tenantgateway.webhook.proxy;

import static java.util.Objects.requireNonNull;

import io.vertx.core.buffer.Buffer;
import tools.jackson.databind.JsonNode;

/** What came back from the upstream webhook: its answer, or why there is none. */
public sealed interface UpstreamResult permits UpstreamResult.Answered, UpstreamResult.Failed {

    /**
     * A well-formed AdmissionReview answer for our request, passed through to the API server unchanged.
     *
     * @param body the exact bytes the upstream sent
     * @param response the parsed {@code response} object (for metrics and the admission log)
     */
    record Answered(Buffer body, JsonNode response) implements UpstreamResult {
        public Answered {
            requireNonNull(body, "body");
            requireNonNull(response, "response");
        }
    }

    record Failed(UpstreamFailure failure) implements UpstreamResult {
        public Failed {
            requireNonNull(failure, "failure");
        }
    }
}
