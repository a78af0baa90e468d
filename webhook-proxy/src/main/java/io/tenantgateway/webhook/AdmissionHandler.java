package io.tenantgateway.webhook;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.webhook.AdmissionRecord.Route;
import io.tenantgateway.webhook.AdmissionReviews.InvalidReview;
import io.tenantgateway.webhook.FailureMapping.Rejection;
import io.tenantgateway.webhook.policy.AdmissionPolicy;
import io.tenantgateway.webhook.policy.Decision;
import io.tenantgateway.webhook.policy.TreeCost;
import io.tenantgateway.webhook.proxy.ReverseProxyHandler;
import io.tenantgateway.webhook.proxy.UpstreamFailure;
import io.tenantgateway.webhook.proxy.UpstreamResult;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import tools.jackson.core.JsonGenerator;
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

/**
 * HTTP ⇄ AdmissionReview: reads and checks the request, lets the built-in {@link AdmissionPolicy} or the upstream
 * webhook decide, answers in the AdmissionReview version received with the request's uid, and records the
 * admission (metrics, one log line, the recent-admissions ring). Never answers with a stack trace.
 *
 * <p>Threading: requests arrive and answers leave on the server's event loops; parsing and deciding run on
 * {@link DecisionWorkers} (a pod of thousands of containers takes a while to decide, and must not hold up the other
 * requests of its loop). A worker's answer goes back to its request's event loop, which sends and records it.
 *
 * <p>Memory: everything a request holds is charged to the webhook's account ({@link RequestBodies}) before it is
 * held — the body as it arrives, then the kept tree as it is parsed (the body is given back once parsed), the
 * policy's copy of the pod, the patch as it is written and the answer — and given back when the answer has been
 * sent. A request that alone could never fit the account is answered 413 naming the limit; one that does not fit
 * because others hold the account now, 429 with {@code Retry-After}.
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
    private final DecisionWorkers workers;

    /**
     * @param policy the current policy, read once per decision: the device configuration can change at run time
     *     ({@link WebhookServer#updateDeviceConfig}) and a decision uses whichever was current when it started
     */
    AdmissionHandler(WebhookConfig config, Supplier<AdmissionPolicy> policy, ReverseProxyHandler proxyOrNull,
            WebhookMetrics metrics, RecentAdmissions recent, Clock clock, RequestBodies bodies,
            DecisionWorkers workers) {
        this.config = requireNonNull(config, "config");
        this.policy = requireNonNull(policy, "policy");
        this.proxy = proxyOrNull;
        this.metrics = requireNonNull(metrics, "metrics");
        this.recent = requireNonNull(recent, "recent");
        this.clock = requireNonNull(clock, "clock");
        this.bodies = requireNonNull(bodies, "bodies");
        this.reader = new ReviewReader(config.maxRequestBytes());
        this.workers = requireNonNull(workers, "workers");
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
     * The memory budget refused bytes this request needs. When the request alone could never fit the account (what
     * it holds plus what it asked for is over the account's limit), 413 naming the limit: retrying cannot help.
     * Otherwise others hold the budget now: 429, try again in a second.
     *
     * @param held what the request held when refused
     * @param close whether to close the connection (the body went past the discard limit, unread)
     */
    private Reply budgetReply(long held, long bytes, boolean close) {
        MemoryBudget.Account account = bodies.account();
        if (held + bytes > account.limit()) {
            return rejectReply(Rejection.DECISION_TOO_LARGE, "admission review too large to decide: it needs more"
                    + " than " + (held + bytes) + " bytes of working memory (the request, its parsed pod, the"
                    + " mutated copy and the answer) and the webhook's memory account " + account.name()
                    + " holds at most " + account.limit() + " bytes (a share of the agent's heap)", AdmissionReviews.V1,
                    "", close, false);
        }
        return rejectReply(Rejection.MEMORY_BUDGET, "webhook memory budget exhausted: account " + account.name()
                + " holds " + account.used() + " of " + account.limit() + " bytes for admission requests in flight and"
                + " this request's " + bytes + " more bytes do not fit; retry later", AdmissionReviews.V1, "", close,
                true);
    }

    /** The memory budget refused to hold more of a request. */
    private static final class BudgetRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final long held;
        final long bytes;

        BudgetRefused(long held, long bytes) {
            super(null, null, false, false);
            this.held = held;
            this.bytes = bytes;
        }
    }

    /** Reserves {@code bytes} more for this request, or throws {@link BudgetRefused}. */
    private static void charge(RequestBodies.InFlight inFlight, long bytes) {
        if (!inFlight.reserveMore(bytes)) {
            throw new BudgetRefused(inFlight.reservedBytes(), bytes);
        }
    }

    /**
     * Checks what can be checked on the event loop, then hands parsing and deciding to a worker
     * ({@link DecisionWorkers}); the worker's answer comes back to this request's event loop.
     *
     * @return whether the request was answered here (false: a worker or the upstream answers later and releases)
     */
    private boolean withBody(HttpServerRequest request, Instant arrived, boolean proxied, RequestBodies.Body body,
            RequestBodies.InFlight inFlight) {
        if (body.refused()) {
            send(request, arrived, budgetReply(inFlight.reservedBytes(), body.size(), body.abandoned()));
            return true;
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
        Context context = Vertx.currentContext();
        DecisionWorkers.Lane lane = DecisionWorkers.Lane.forBody(body.size());
        boolean queued = workers.submit(lane, () -> {
            Outcome outcome = offLoop(() -> prepare(proxied, body, inFlight), inFlight);
            context.runOnContext(ignored -> deliver(request, arrived, outcome, inFlight));
        });
        if (!queued) {
            send(request, arrived, rejectReply(Rejection.MEMORY_BUDGET, "webhook busy: "
                    + DecisionWorkers.queueLimit(lane) + " admission decisions already wait in the " + lane.label()
                    + " lane; retry later", AdmissionReviews.V1, "", false, true));
            return true;
        }
        return false;
    }

    /** Runs a worker's step, turning a budget refusal or a bug into its answer. */
    private Outcome offLoop(Supplier<Outcome> step, RequestBodies.InFlight inFlight) {
        try {
            return step.get();
        } catch (BudgetRefused e) {
            return budgetReply(e.held, e.bytes, false);
        } catch (RuntimeException e) {
            log.error("admission decision failed", e);
            return rejectReply(Rejection.INTERNAL_ERROR, "internal error: " + e, AdmissionReviews.V1, "", false, false);
        }
    }

    /** What a worker hands back to the event loop: an answer, or a review to forward upstream. */
    private sealed interface Outcome permits Reply, Forward {
    }

    /** An answer ready to send, and what to record of it. */
    private record Reply(int status, Buffer body, boolean retryAfter, boolean close, Summary summary)
            implements Outcome {
    }

    /** A review for the upstream webhook, with the body as received. */
    private record Forward(AdmissionReviews.Request review, Buffer body) implements Outcome {
    }

    /**
     * What the admission record and log line say about a request: strings only, so an answer waiting to be sent
     * holds none of the pod.
     */
    private record Summary(String uid, String namespace, String podName, String operation, Route route,
            String decision, int code, String message, int patchOperations, int warnings,
            UpstreamFailure upstreamFailure) {

        static Summary of(AdmissionReviews.Request review, Route route, Decision decision, int patchOperations,
                UpstreamFailure upstreamFailure) {
            return new Summary(review.uid(), review.namespace(), review.podName(), review.operation(), route,
                    decision.outcome().label(), decision.code(), decision.message(), patchOperations,
                    decision.warnings().size(), upstreamFailure);
        }
    }

    /** On a worker: parses the body (charging the kept tree), then decides or prepares the upstream call. */
    private Outcome prepare(boolean proxied, RequestBodies.Body body, RequestBodies.InFlight inFlight) {
        JsonNode root;
        try {
            root = reader.read(body.stream(), bytes -> charge(inFlight, bytes));
        } catch (StreamConstraintsException e) {
            return rejectReply(Rejection.MALFORMED_JSON, "JSON over a read limit" + location(e) + ": "
                    + e.getOriginalMessage(), AdmissionReviews.V1, "", false, false);
        } catch (JacksonException e) {
            return rejectReply(Rejection.MALFORMED_JSON, "malformed JSON" + location(e) + ": "
                    + e.getOriginalMessage(), AdmissionReviews.V1, "", false, false);
        }
        if (root == null || root.isMissingNode()) {
            return rejectReply(Rejection.EMPTY_BODY, "request body is empty", AdmissionReviews.V1, "", false, false);
        }
        AdmissionReviews.Request review;
        try {
            review = AdmissionReviews.parse(root);
        } catch (InvalidReview e) {
            return rejectReply(Rejection.NOT_AN_ADMISSION_REVIEW, e.getMessage(), e.apiVersion, e.uid, false, false);
        }
        if (proxied) {
            // The upstream gets the body as received, in one buffer: held (and reserved) twice until it is sent.
            charge(inFlight, body.size());
            Buffer joined = body.joined();
            inFlight.releaseChunks();
            return new Forward(review, joined);
        }
        inFlight.releaseChunks();
        return answer(review, decideBuiltIn(review, inFlight), Route.BUILT_IN, null, inFlight);
    }

    /**
     * HAMi's decision on the kept tree. The policy decides on a copy of the pod: that copy (its structure; the values
     * are shared) is charged before it is made, and what the mutations added after.
     */
    private Decision decideBuiltIn(AdmissionReviews.Request review, RequestBodies.InFlight inFlight) {
        if (!review.podCreate()) {
            return Decision.allowedUnchanged(""); // HAMi's webhook is registered for pod CREATE only
        }
        long copy = TreeCost.of(review.object());
        charge(inFlight, copy);
        Decision decision = policy.get().admit(review.object(), review.namespace());
        long grown = decision.mutatedBytes() - copy;
        if (grown > 0) {
            charge(inFlight, grown);
        }
        return decision;
    }

    /**
     * The answer's bytes: the JSON patch written from the decision (charged segment by segment as it grows), then
     * the AdmissionReview around it with the patch base64-encoded in place (charged before it is allocated).
     */
    private Reply answer(AdmissionReviews.Request review, Decision decision, Route route,
            UpstreamFailure upstreamFailure, RequestBodies.InFlight inFlight) {
        ChargedOutput patch = null;
        int operations = 0;
        if (review.object() != null) {
            ChargedOutput written = new ChargedOutput(bytes -> charge(inFlight, bytes));
            try (JsonGenerator out = json.createGenerator(written)) {
                operations = Math.max(0, decision.writePatch(review.object(), out));
            }
            patch = written;
        }
        long patchLength = operations == 0 ? 0 : patch.size();
        long answerBytes = AdmissionReviews.answerBytes(review.apiVersion(), review.uid(), decision, patchLength);
        charge(inFlight, answerBytes);
        Buffer bytes = Buffer.buffer((int) Math.min(Integer.MAX_VALUE - 8, answerBytes));
        try (JsonGenerator out = json.createGenerator(new BufferOutput(bytes))) {
            AdmissionReviews.writeAnswer(out, review.apiVersion(), review.uid(), decision,
                    patchLength == 0 ? null : patch.stream(), patchLength);
        }
        if (patch != null) {
            inFlight.giveBack(patch.charged());
        }
        return new Reply(200, bytes, false, false, Summary.of(review, route, decision, operations, upstreamFailure));
    }

    /** An {@link java.io.OutputStream} appending to a Vert.x buffer. */
    private static final class BufferOutput extends java.io.OutputStream {
        private final Buffer buffer;

        BufferOutput(Buffer buffer) {
            this.buffer = buffer;
        }

        @Override
        public void write(int b) {
            buffer.appendByte((byte) b);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            buffer.appendBytes(bytes, offset, length);
        }
    }

    /** Back on the request's event loop: sends the worker's answer, or forwards the review upstream. */
    private void deliver(HttpServerRequest request, Instant arrived, Outcome outcome,
            RequestBodies.InFlight inFlight) {
        boolean answered = true;
        try {
            if (outcome instanceof Forward forward) {
                answered = false;
                forward(request, arrived, forward.review(), forward.body(), inFlight);
            } else {
                send(request, arrived, (Reply) outcome);
            }
        } catch (RuntimeException e) {
            internalError(request, arrived, e);
        } finally {
            if (answered) {
                inFlight.release();
            }
        }
    }

    private void forward(HttpServerRequest request, Instant arrived, AdmissionReviews.Request review, Buffer body,
            RequestBodies.InFlight inFlight) {
        Context context = Vertx.currentContext();
        proxy.forward(body, review.uid()).onComplete(done -> {
            boolean answered = true;
            try {
                UpstreamResult result = done.succeeded() ? done.result()
                        : new UpstreamResult.Failed(new UpstreamFailure(UpstreamFailure.Reason.CONNECTION,
                                String.valueOf(done.cause())));
                if (result instanceof UpstreamResult.Answered upstream) {
                    passThrough(request, arrived, review, upstream);
                } else {
                    UpstreamFailure failure = ((UpstreamResult.Failed) result).failure();
                    metrics.upstreamFailed(failure.reason().label());
                    Route route = switch (proxy.config().failurePolicy()) {
                        case FAIL_CLOSED -> Route.FAIL_CLOSED;
                        case FAIL_OPEN -> Route.FAIL_OPEN;
                        case FALLBACK -> Route.FALLBACK;
                    };
                    // The built-in decision (fallback) runs on a worker as every decision does; the others are
                    // answers without a patch.
                    answered = !workers.submit(DecisionWorkers.Lane.forBody(body.length()), () -> {
                        Outcome outcome = offLoop(() -> answer(review, FailureMapping.upstreamFailed(
                                proxy.config().failurePolicy(), proxy.config().url(), failure,
                                () -> decideBuiltIn(review, inFlight)), route, failure, inFlight), inFlight);
                        context.runOnContext(ignored -> deliver(request, arrived, outcome, inFlight));
                    });
                    if (answered) {
                        send(request, arrived, rejectReply(Rejection.MEMORY_BUDGET, "webhook busy: upstream failed"
                                + " and no decision worker is free; retry later", review.apiVersion(), review.uid(),
                                false, true));
                    }
                }
            } catch (RuntimeException e) {
                internalError(request, arrived, e);
            } finally {
                if (answered) {
                    inFlight.release();
                }
            }
        });
    }

    private void passThrough(HttpServerRequest request, Instant arrived, AdmissionReviews.Request review,
            UpstreamResult.Answered answered) {
        sendJson(request, 200, answered.body(), false);
        JsonNode response = answered.response();
        boolean allowed = response.path("allowed").booleanValue();
        int code = response.path("status").path("code").asInt(allowed ? 200 : 403);
        String decision = allowed ? "allowed" : code == 403 ? "denied" : "errored";
        record(arrived, new Summary(review.uid(), review.namespace(), review.podName(), review.operation(),
                Route.UPSTREAM, decision, code, response.path("status").path("message").asString(""),
                patchOperations(response), response.path("warnings").size(), null));
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

    /** Answers on the event loop with a rejection made there. */
    private void reject(HttpServerRequest request, Instant arrived, Rejection rejection, String message,
            String apiVersion, String uid, boolean closeConnection) {
        send(request, arrived, rejectReply(rejection, message, apiVersion, uid, closeConnection,
                rejection == Rejection.MEMORY_BUDGET));
    }

    /** A rejection's answer: its status as the HTTP status too, no patch. */
    private Reply rejectReply(Rejection rejection, String message, String apiVersion, String uid,
            boolean closeConnection, boolean retryAfter) {
        Decision decision = rejection.decision(message);
        Buffer bytes = Buffer.buffer(256);
        try (JsonGenerator out = json.createGenerator(new BufferOutput(bytes))) {
            AdmissionReviews.writeAnswer(out, apiVersion, uid, decision, null, 0);
        }
        return new Reply(rejection.status, bytes, retryAfter, closeConnection, new Summary(uid, "", "", "",
                Route.REJECTED, decision.outcome().label(), decision.code(), message, 0, 0, null));
    }

    private void send(HttpServerRequest request, Instant arrived, Reply reply) {
        if (reply.retryAfter()) {
            request.response().putHeader("Retry-After", "1");
        }
        sendJson(request, reply.status(), reply.body(), reply.close());
        record(arrived, reply.summary());
    }

    private void internalError(HttpServerRequest request, Instant arrived, RuntimeException e) {
        log.error("admission handler failed path={} remote={}", request.path(), request.remoteAddress(), e);
        if (request.response().ended() || request.response().closed()) {
            return;
        }
        reject(request, arrived, Rejection.INTERNAL_ERROR, "internal error: " + e, AdmissionReviews.V1, "", false);
    }

    private void record(Instant arrived, Summary summary) {
        Duration elapsed = Duration.between(arrived, clock.instant());
        if (elapsed.isNegative()) {
            elapsed = Duration.ZERO;
        }
        metrics.answered(summary.decision(), summary.code(), elapsed);
        recent.add(new AdmissionRecord(arrived, summary.uid(), summary.namespace(), summary.podName(),
                summary.operation(), summary.route(), summary.decision(), summary.code(), summary.message(),
                summary.patchOperations(), summary.warnings(), elapsed));
        Level level = summary.route() == Route.BUILT_IN || summary.route() == Route.UPSTREAM ? Level.INFO : Level.WARN;
        log.atLevel(level).log("admission uid={} pod={}/{} op={} route={} decision={} code={} ms={} patchOps={}{}{}",
                summary.uid(), summary.namespace(), summary.podName(), summary.operation(), summary.route().label(),
                summary.decision(), summary.code(), String.format(Locale.ROOT, "%.1f", elapsed.toNanos() / 1e6),
                summary.patchOperations(),
                summary.message().isEmpty() ? "" : " message=\"" + summary.message() + "\"",
                summary.upstreamFailure() == null ? "" : " upstreamError=" + summary.upstreamFailure().reason().label());
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
