package io.tenantgateway.webhook.proxy;

import static java.util.Objects.requireNonNull;

import io.netty.channel.ConnectTimeoutException;
import io.tenantgateway.certs.TlsFailures;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.vertx.VertxTls;
import io.tenantgateway.common.time.GoDuration;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.time.Clock;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Forwards admission requests to an upstream HTTPS webhook (e.g. the real {@code hami-scheduler}) and classifies
 * every way that can fail, so the admission handler can apply the configured {@link FailurePolicy}. The upstream
 * certificate is verified against the upstream's own CA (and host name); the whole exchange, connect included,
 * must finish within the configured timeout.
 *
 * <p>Threading: {@link #forward} runs on the caller's event loop (a call from another thread is moved onto one);
 * the returned future completes there. The client's connection pool is shared by all admissions and bounded.
 */
public final class ReverseProxyHandler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReverseProxyHandler.class);
    /** An AdmissionReview answer is small; anything near the request limit is not one. */
    static final int MAX_ANSWER_BYTES = 7 * 1024 * 1024;
    private static final int MAX_POOLED_CONNECTIONS = 16;
    private static final int ERROR_EXCERPT_CHARS = 200;

    private final Vertx vertx;
    private final UpstreamConfig config;
    private final HttpClientAgent client;
    private final JsonMapper mapper = JsonMapper.builder().build();
    private final String target;

    public ReverseProxyHandler(Vertx vertx, UpstreamConfig config, TlsMaterial upstreamTrust, Clock clock) {
        this.vertx = requireNonNull(vertx, "vertx");
        this.config = requireNonNull(config, "config");
        requireNonNull(upstreamTrust, "upstreamTrust");
        HttpClientOptions options = new HttpClientOptions()
                .setProtocolVersion(HttpVersion.HTTP_1_1)
                .setVerifyHost(true)
                .setForceSni(true)
                .setConnectTimeout((int) config.timeout().toMillis())
                .setKeepAlive(true)
                .setKeepAliveTimeout(30);
        VertxTls.configureClient(options, upstreamTrust, requireNonNull(clock, "clock"));
        this.client = vertx.createHttpClient(options, new PoolOptions().setHttp1MaxSize(MAX_POOLED_CONNECTIONS));
        this.target = config.url().toString();
    }

    public UpstreamConfig config() {
        return config;
    }

    /**
     * Sends one AdmissionReview to the upstream. Never fails: the result is the upstream's answer or an
     * {@link UpstreamFailure}.
     *
     * @param body the AdmissionReview exactly as the API server sent it
     * @param uid the request's uid; an answer for another uid is invalid
     */
    public Future<UpstreamResult> forward(Buffer body, String uid) {
        if (!Context.isOnEventLoopThread()) {
            // Every step must attach its handler on the loop that completes it, or a fast answer can arrive
            // before the body handler is set and be lost.
            Promise<UpstreamResult> dispatched = Promise.promise();
            vertx.getOrCreateContext().runOnContext(ignored -> forward(body, uid).onComplete(dispatched));
            return dispatched.future();
        }
        Promise<UpstreamResult> promise = Promise.promise();
        HttpClientRequest[] inFlight = new HttpClientRequest[1];
        long timer = vertx.setTimer(config.timeout().toMillis(), id -> {
            UpstreamFailure timeout = new UpstreamFailure(UpstreamFailure.Reason.TIMEOUT,
                    "no answer within " + GoDuration.format(config.timeout()));
            if (promise.tryComplete(new UpstreamResult.Failed(timeout)) && inFlight[0] != null) {
                inFlight[0].reset(0, new java.util.concurrent.TimeoutException(timeout.detail()));
            }
        });
        RequestOptions request = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(target)
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "application/json");
        client.request(request)
                .compose(sent -> {
                    inFlight[0] = sent;
                    return sent.send(body);
                })
                .compose(response -> BoundedBody.read(response, MAX_ANSWER_BYTES, MAX_ANSWER_BYTES)
                        .map(answer -> interpret(response.statusCode(), answer, uid)))
                .onComplete(done -> {
                    vertx.cancelTimer(timer);
                    UpstreamResult result = done.succeeded() ? done.result()
                            : new UpstreamResult.Failed(classify(done.cause()));
                    if (!promise.tryComplete(result)) {
                        log.debug("upstream answered after the timeout upstream={} uid={}", target, uid);
                    }
                });
        return promise.future();
    }

    private UpstreamResult interpret(int status, BoundedBody.Body answer, String uid) {
        if (answer.tooLarge()) {
            return invalid("answer larger than " + MAX_ANSWER_BYTES + " bytes");
        }
        if (status != 200) {
            return new UpstreamResult.Failed(new UpstreamFailure(UpstreamFailure.Reason.HTTP_STATUS,
                    "answered HTTP " + status + excerpt(answer.body())));
        }
        JsonNode review;
        try {
            review = mapper.readTree(answer.body().getBytes());
        } catch (JacksonException e) {
            return invalid("answer is not JSON (" + e.getOriginalMessage() + ")");
        }
        JsonNode response = review.path("response");
        if (!response.isObject()) {
            return invalid("answer has no response object");
        }
        String answeredUid = response.path("uid").asString("");
        if (!answeredUid.equals(uid)) {
            return invalid("answer is for uid '" + answeredUid + "', not '" + uid + "'");
        }
        if (!response.path("allowed").isBoolean()) {
            return invalid("answer has no response.allowed");
        }
        return new UpstreamResult.Answered(answer.body(), response);
    }

    private static UpstreamResult invalid(String detail) {
        return new UpstreamResult.Failed(new UpstreamFailure(UpstreamFailure.Reason.INVALID_RESPONSE, detail));
    }

    private static String excerpt(Buffer body) {
        if (body == null || body.length() == 0) {
            return "";
        }
        String text = new String(body.getBytes(0, Math.min(body.length(), ERROR_EXCERPT_CHARS * 4)),
                StandardCharsets.UTF_8).replaceAll("\\s+", " ").trim();
        if (text.length() > ERROR_EXCERPT_CHARS) {
            text = text.substring(0, ERROR_EXCERPT_CHARS) + "…";
        }
        return text.isEmpty() ? "" : ": " + text;
    }

    /** Maps a transport failure to its reason; TLS first, since handshake errors often wrap connection errors. */
    UpstreamFailure classify(Throwable failure) {
        if (find(failure, SSLException.class) != null || find(failure, CertificateException.class) != null) {
            return new UpstreamFailure(UpstreamFailure.Reason.TLS, "TLS handshake failed: "
                    + TlsFailures.describe(failure));
        }
        String hostPort = config.url().getHost() + ":" + config.port();
        if (find(failure, ConnectTimeoutException.class) != null) {
            return new UpstreamFailure(UpstreamFailure.Reason.TIMEOUT, "connect to " + hostPort + " timed out");
        }
        if (find(failure, UnknownHostException.class) != null) {
            return new UpstreamFailure(UpstreamFailure.Reason.CONNECT, "cannot resolve " + config.url().getHost());
        }
        ConnectException connect = find(failure, ConnectException.class);
        if (connect != null || find(failure, NoRouteToHostException.class) != null) {
            return new UpstreamFailure(UpstreamFailure.Reason.CONNECT, "cannot connect to " + hostPort + " ("
                    + (connect != null ? shortMessage(connect) : "no route to host") + ")");
        }
        return new UpstreamFailure(UpstreamFailure.Reason.CONNECTION, "connection to " + hostPort + " failed: "
                + shortMessage(failure));
    }

    private static String shortMessage(Throwable failure) {
        String message = failure.getMessage();
        return message == null || message.isBlank() ? failure.getClass().getSimpleName() : message;
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    @Override
    public void close() {
        client.close();
    }
}
