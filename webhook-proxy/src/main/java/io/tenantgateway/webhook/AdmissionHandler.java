package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.webhook.AdmissionRecord.Route;
import io.tenantgateway.webhook.AdmissionReviews.InvalidReview;
import io.tenantgateway.webhook.FailureMapping.Rejection;
import io.tenantgateway.webhook.policy.AdmissionPolicy;
import io.tenantgateway.webhook.policy.Decision;
import io.tenantgateway.webhook.policy.JsonPatches;
import io.tenantgateway.webhook.proxy.ReverseProxyHandler;
import io.tenantgateway.webhook.proxy.UpstreamFailure;
import io.tenantgateway.webhook.proxy.UpstreamResult;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import io.tenantgateway.common.memory.MemoryBudget;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;

/**
 * HTTP ⇄ AdmissionReview: reads and checks the request, lets the built-in {@link AdmissionPolicy} or the upstream
 * webhook decide, answers in the AdmissionReview version received with the request's uid, and records the
 * admission (metrics, one log line, the recent-admissions ring). Never answers with a stack trace.
 *
 * <p>Threading: runs on the server's event loop. The policy is pure CPU work on a small tree and the quota
 * lookup answers from memory, so nothing here blocks.
 */
final class AdmissionHandler implements Handler<HttpServerRequest> {
    private static final Logger log = LoggerFactory.getLogger(AdmissionHandler.class);
    private static final String JSON_TYPE = "application/json";
    /** Past this many bytes of an oversized body we stop reading it and close the connection. */
    private static final int DISCARD_FACTOR = 4;

    private final WebhookConfig config;
    private final Supplier<AdmissionPolicy> policy;
    private final ReverseProxyHandler proxy;
    private final WebhookMetrics metrics;
    private final RecentAdmissions recent;
    private final Clock clock;
    private final RequestBodies bodies;
    private final JsonMapper json = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private final ReviewReader reader;

    /**
     * @param policy the current policy, read once per decision: the device configuration can change at run time
     *     ({@link WebhookServer#updateDeviceConfig}) and a decision uses whichever was current when it started
     */
    AdmissionHandler(WebhookConfig config, Supplier<AdmissionPolicy> policy, ReverseProxyHandler proxyOrNull,
            WebhookMetrics metrics, RecentAdmissions recent, Clock clock, RequestBodies bodies) {
        this.config = requireNonNull(config, "config");
        this.policy = requireNonNull(policy, "policy");
        this.proxy = proxyOrNull;
        this.metrics = requireNonNull(metrics, "metrics");
        this.recent = requireNonNull(recent, "recent");
        this.clock = requireNonNull(clock, "clock");
        this.bodies = requireNonNull(bodies, "bodies");
        this.reader = new ReviewReader(json, config.maxRequestBytes());
    }

    @Override
    public void handle(HttpServerRequest request) {
        Instant arrived = clock.instant();
        try {
            route(request, arrived);
        } catch (RuntimeException e) {
            internalError(request, arrived, e);
        }
    }

    private void route(HttpServerRequest request, Instant arrived) {
        String path = request.path();
        if (path.equals("/healthz") || path.equals("/readyz")) {
            sendText(request, request.method() == HttpMethod.GET || request.method() == HttpMethod.HEAD ? 200 : 405,
                    "ok");
            return;
        }
        boolean proxied = proxy != null && path.equals(proxy.config().path());
        boolean builtIn = !proxied && path.equals(config.path());
        if (!proxied && !builtIn) {
            sendText(request, 404, "no handler for " + path + " (expected: POST " + config.path() + ")");
            return;
        }
        if (request.method() != HttpMethod.POST) {
            request.response().putHeader("Allow", "POST");
            sendText(request, 405, request.method() + " " + path + " (expected: POST)");
            return;
        }
        int limit = config.maxRequestBytes();
        long declared = declaredLength(request);
        if (declared > limit) {
            // Known too large before a byte of it arrives: answered at once and closed, the body never read (no
            // TLS decryption spent on it). Not paused instead: a paused TLS connection keeps its read buffers
            // (direct memory, shared with the tunnel: 100 paused uploads took all 32 MiB in WebhookMemoryBudgetIT).
            // A client still sending may see the reset before the answer; kube-apiserver never sends such a body.
            reject(request, arrived, Rejection.BODY_TOO_LARGE, "request entity is too large; limit is " + limit
                    + " bytes", AdmissionReviews.V1, "", true);
            return;
        }
        RequestBodies.InFlight inFlight = bodies.read(request, limit, (long) limit * DISCARD_FACTOR);
        inFlight.body().onComplete(read -> {
            if (read.failed()) {
                // The caller went away mid-body (reset, closed, cut for the budget): nobody is left to answer.
                inFlight.release();
                log.debug("reading admission request failed path={} remote={}: {}", path, request.remoteAddress(),
                        read.cause().toString());
                return;
            }
            boolean answered = true;
            try {
                answered = withBody(request, arrived, proxied, read.result(), inFlight);
            } catch (BudgetRefused e) {
                refuseForBudget(request, arrived, e.bytes, read.result().abandoned());
            } catch (RuntimeException e) {
                internalError(request, arrived, e);
            } finally {
                if (answered) {
                    inFlight.release();
                }
            }
        });
    }

    /**
     * The memory budget refused bytes this request needs: 429, try again in a second (the connection is closed
     * only when the body went past the discard limit).
     */
    private void refuseForBudget(HttpServerRequest request, Instant arrived, long bytes, boolean close) {
        MemoryBudget.Account account = bodies.account();
        request.response().putHeader("Retry-After", "1");
        reject(request, arrived, Rejection.MEMORY_BUDGET, "webhook memory budget exhausted: account "
                + account.name() + " holds " + account.used() + " of " + account.limit() + " bytes for admission"
                + " requests in flight and this request's " + bytes + " bytes do not fit; retry later",
                AdmissionReviews.V1, "", close);
    }

    /** The memory budget refused to hold more of a request. */
    private static final class BudgetRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final long bytes;

        BudgetRefused(long bytes) {
            super(null, null, false, false);
            this.bytes = bytes;
        }
    }

    /** @return whether the request was answered here (false: the upstream answers later and releases) */
    private boolean withBody(HttpServerRequest request, Instant arrived, boolean proxied, RequestBodies.Body body,
            RequestBodies.InFlight inFlight) {
        if (body.refused()) {
            throw new BudgetRefused(body.size());
        }
        if (body.tooLarge()) {
            reject(request, arrived, Rejection.BODY_TOO_LARGE, "request entity is too large; limit is "
                    + config.maxRequestBytes() + " bytes", AdmissionReviews.V1, "", body.abandoned());
            return true;
        }
        String contentType = request.getHeader("Content-Type");
        if (!isJson(contentType)) {
            reject(request, arrived, Rejection.WRONG_CONTENT_TYPE, "contentType="
                    + (contentType == null ? "" : contentType) + ", expected " + JSON_TYPE, AdmissionReviews.V1, "",
                    false);
            return true;
        }
        if (body.size() == 0) {
            reject(request, arrived, Rejection.EMPTY_BODY, "request body is empty", AdmissionReviews.V1, "", false);
            return true;
        }
        JsonNode root;
        try {
            root = reader.read(body.stream(), bytes -> {
                if (!inFlight.reserveMore(bytes)) {
                    throw new BudgetRefused(bytes);
                }
            });
        } catch (StreamConstraintsException e) {
            reject(request, arrived, Rejection.MALFORMED_JSON, "JSON over a read limit" + location(e) + ": "
                    + e.getOriginalMessage(), AdmissionReviews.V1, "", false);
            return true;
        } catch (JacksonException e) {
            reject(request, arrived, Rejection.MALFORMED_JSON, "malformed JSON" + location(e) + ": "
                    + e.getOriginalMessage(), AdmissionReviews.V1, "", false);
            return true;
        }
        if (root == null || root.isMissingNode()) {
            reject(request, arrived, Rejection.EMPTY_BODY, "request body is empty", AdmissionReviews.V1, "", false);
            return true;
        }
        AdmissionReviews.Request review;
        try {
            review = AdmissionReviews.parse(root);
        } catch (InvalidReview e) {
            reject(request, arrived, Rejection.NOT_AN_ADMISSION_REVIEW, e.getMessage(), e.apiVersion, e.uid, false);
            return true;
        }
        if (proxied) {
            // The upstream gets the body as received, in one buffer: held (and reserved) twice until it is sent.
            if (!inFlight.reserveMore(body.size())) {
                throw new BudgetRefused(body.size());
            }
            Buffer joined = body.joined();
            inFlight.dropChunks();
            forward(request, arrived, review, joined, inFlight);
            return false;
        }
        inFlight.dropChunks();
        answer(request, arrived, review, decideBuiltIn(review), Route.BUILT_IN, null);
        return true;
    }

    private Decision decideBuiltIn(AdmissionReviews.Request review) {
        if (!review.podCreate()) {
            return Decision.allowedUnchanged(""); // HAMi's webhook is registered for pod CREATE only
        }
        return policy.get().admit(review.object(), review.namespace());
    }

    private void forward(HttpServerRequest request, Instant arrived, AdmissionReviews.Request review, Buffer body,
            RequestBodies.InFlight inFlight) {
        proxy.forward(body, review.uid()).onComplete(done -> {
            inFlight.release();
            try {
                UpstreamResult result = done.succeeded() ? done.result()
                        : new UpstreamResult.Failed(new UpstreamFailure(UpstreamFailure.Reason.CONNECTION,
                                String.valueOf(done.cause())));
                if (result instanceof UpstreamResult.Answered answered) {
                    passThrough(request, arrived, review, answered);
                } else {
                    UpstreamFailure failure = ((UpstreamResult.Failed) result).failure();
                    metrics.upstreamFailed(failure.reason().label());
                    Decision decision = FailureMapping.upstreamFailed(proxy.config().failurePolicy(),
                            proxy.config().url(), failure, () -> decideBuiltIn(review));
                    Route route = switch (proxy.config().failurePolicy()) {
                        case FAIL_CLOSED -> Route.FAIL_CLOSED;
                        case FAIL_OPEN -> Route.FAIL_OPEN;
                        case FALLBACK -> Route.FALLBACK;
                    };
                    answer(request, arrived, review, decision, route, failure);
                }
            } catch (RuntimeException e) {
                internalError(request, arrived, e);
            }
        });
    }

    private void answer(HttpServerRequest request, Instant arrived, AdmissionReviews.Request review,
            Decision decision, Route route, UpstreamFailure upstreamFailure) {
        ArrayNode patch = null;
        JsonNode mutated = decision.mutated();
        if (mutated != null) {
            patch = JsonPatches.diff(review.object(), mutated);
        }
        byte[] bytes = json.writeValueAsBytes(AdmissionReviews.answer(json, review.apiVersion(), review.uid(),
                decision, patch));
        sendJson(request, 200, Buffer.buffer(bytes), false);
        record(arrived, review, route, decision.outcome().label(), decision.code(), decision.message(),
                patch == null ? 0 : patch.size(), decision.warnings().size(), upstreamFailure);
    }

    private void passThrough(HttpServerRequest request, Instant arrived, AdmissionReviews.Request review,
            UpstreamResult.Answered answered) {
        sendJson(request, 200, answered.body(), false);
        JsonNode response = answered.response();
        boolean allowed = response.path("allowed").booleanValue();
        int code = response.path("status").path("code").asInt(allowed ? 200 : 403);
        String decision = allowed ? "allowed" : code == 403 ? "denied" : "errored";
        record(arrived, review, Route.UPSTREAM, decision, code, response.path("status").path("message").asString(""),
                patchOperations(response), response.path("warnings").size(), null);
    }

    private int patchOperations(JsonNode response) {
        String patch = response.path("patch").asString("");
        if (patch.isEmpty()) {
            return 0;
        }
        try {
            return json.readTree(Base64.getDecoder().decode(patch)).size();
        } catch (IllegalArgumentException | JacksonException e) {
            return 0; // the upstream's patch is its business; the count is only for our log
        }
    }

    private void reject(HttpServerRequest request, Instant arrived, Rejection rejection, String message,
            String apiVersion, String uid, boolean closeConnection) {
        Decision decision = rejection.decision(message);
        byte[] bytes = json.writeValueAsBytes(AdmissionReviews.answer(json, apiVersion, uid, decision, null));
        sendJson(request, rejection.status, Buffer.buffer(bytes), closeConnection);
        AdmissionReviews.Request unknown = new AdmissionReviews.Request(apiVersion, uid, "", "", "", "", "", "",
                null);
        record(arrived, unknown, Route.REJECTED, decision.outcome().label(), decision.code(), message, 0, 0, null);
    }

    private void internalError(HttpServerRequest request, Instant arrived, RuntimeException e) {
        log.error("admission handler failed path={} remote={}", request.path(), request.remoteAddress(), e);
        if (request.response().ended() || request.response().closed()) {
            return;
        }
        reject(request, arrived, Rejection.INTERNAL_ERROR, "internal error: " + e, AdmissionReviews.V1, "", false);
    }

    private void record(Instant arrived, AdmissionReviews.Request review, Route route, String decision, int code,
            String message, int patchOperations, int warnings, UpstreamFailure upstreamFailure) {
        Duration elapsed = Duration.between(arrived, clock.instant());
        if (elapsed.isNegative()) {
            elapsed = Duration.ZERO;
        }
        metrics.answered(decision, code, elapsed);
        String name = review.podName();
        recent.add(new AdmissionRecord(arrived, review.uid(), review.namespace(), name, review.operation(), route,
                decision, code, message, patchOperations, warnings, elapsed));
        Level level = route == Route.BUILT_IN || route == Route.UPSTREAM ? Level.INFO : Level.WARN;
        log.atLevel(level).log("admission uid={} pod={}/{} op={} route={} decision={} code={} ms={} patchOps={}{}{}",
                review.uid(), review.namespace(), name, review.operation(), route.label(), decision, code,
                String.format(Locale.ROOT, "%.1f", elapsed.toNanos() / 1e6), patchOperations,
                message.isEmpty() ? "" : " message=\"" + message + "\"",
                upstreamFailure == null ? "" : " upstreamError=" + upstreamFailure.reason().label());
    }

    private static void sendJson(HttpServerRequest request, int status, Buffer body, boolean closeConnection) {
        HttpServerResponse response = request.response();
        if (response.ended() || response.closed()) {
            log.debug("admission answer dropped: caller gone remote={}", request.remoteAddress());
            return;
        }
        response.setStatusCode(status).putHeader("Content-Type", JSON_TYPE);
        if (closeConnection && request.version() == HttpVersion.HTTP_2) {
            // HTTP/2 multiplexes: kube-apiserver sends its other reviews on the same connection, so only this stream
            // ends (RST_STREAM NO_ERROR once answered, the rest of its body unread: RFC 9113 8.1), and no
            // Connection header (connection-specific, which makes the response malformed: RFC 9113 8.2.2).
            response.end(body).onComplete(ignored -> {
                if (!request.isEnded()) {
                    response.reset(0);
                }
            });
        } else if (closeConnection) {
            response.putHeader("Connection", "close");
            response.end(body).onComplete(ignored -> request.connection().close());
        } else {
            response.end(body);
        }
    }

    private static void sendText(HttpServerRequest request, int status, String text) {
        HttpServerResponse response = request.response();
        if (!response.ended() && !response.closed()) {
            response.setStatusCode(status).putHeader("Content-Type", "text/plain; charset=utf-8").end(text + "\n");
        }
    }

    /** The {@code Content-Length} header as a number; -1 when absent or not a number (chunked, HTTP/2). */
    private static long declaredLength(HttpServerRequest request) {
        String value = request.getHeader("Content-Length");
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String mediaType = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim();
        return mediaType.equalsIgnoreCase(JSON_TYPE);
    }

    private static String location(JacksonException e) {
        TokenStreamLocation location = e.getLocation();
        if (location == null || location.getLineNr() < 0) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }
}
