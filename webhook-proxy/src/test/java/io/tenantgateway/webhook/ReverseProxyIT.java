package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.vertx.VertxTls;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.webhook.AdmissionClient.Admission;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reverse-proxy mode against real upstream Vert.x HTTPS webhooks: an upstream that answers (passed through
 * byte for byte), one that never answers (past the timeout), none at all (connection refused) and one whose
 * certificate is not signed by the upstream CA we trust, each under fail-closed, fail-open and fallback.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReverseProxyIT {
    /**
     * The upstream deadline where the test proves the timeout itself: the silent upstream never answers, so it fires
     * however slow the machine is. Everywhere else the longest deadline the product allows (an answer, a refused
     * connection and a failed handshake must each arrive before it, and a loaded CI's first TLS call can take
     * seconds).
     */
    static final Duration SILENT_UPSTREAM_TIMEOUT = Duration.ofMillis(500);
    static final Duration TIMEOUT = UpstreamConfig.DEFAULT_TIMEOUT;

    static WebhookFixture fixture;
    static final TestPki upstreamPki = TestPki.create("hami-upstream");
    static final TestPki strangerPki = TestPki.create("stranger");
    static final Map<String, Buffer> upstreamAnswers = new ConcurrentHashMap<>();
    static final List<HttpServerRequest> heldRequests = new CopyOnWriteArrayList<>();
    static HttpServer answering;
    static HttpServer silent;
    static HttpServer untrusted;
    static int downPort;

    enum Upstream { ANSWERS, SLOW, DOWN, UNTRUSTED }

    @BeforeAll
    static void startUpstreams() throws IOException {
        fixture = new WebhookFixture();
        answering = upstream(upstreamPki, ReverseProxyIT::answer);
        silent = upstream(upstreamPki, heldRequests::add); // reads the request, never answers
        untrusted = upstream(strangerPki, ReverseProxyIT::answer);
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            downPort = socket.getLocalPort(); // closed again: connecting is refused
        }
    }

    @AfterAll
    static void stop() {
        for (HttpServer server : List.of(answering, silent, untrusted)) {
            AdmissionClient.await(server.close());
        }
        fixture.close();
    }

    static HttpServer upstream(TestPki pki, io.vertx.core.Handler<HttpServerRequest> handler) {
        HttpServerOptions options = VertxTls.configureServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0),
                pki.serverMaterial(), ClientAuthMode.NONE, Clock.systemUTC());
        return AdmissionClient.await(fixture.vertx.createHttpServer(options).requestHandler(handler).listen());
    }

    /**
     * A stand-in for HAMi's webhook that is recognisably not ours: it labels the pod {@code answered-by: upstream}
     * and leaves the scheduler alone. {@code /wrong-uid} answers for another request, {@code /broken} with 500.
     */
    static void answer(HttpServerRequest request) {
        request.body().onSuccess(body -> {
            JsonNode review = Pods.JSON.readTree(body.getBytes());
            String uid = review.path("request").path("uid").asString();
            if (request.path().equals("/broken")) {
                request.response().setStatusCode(500).end("scheduler cache not synced");
                return;
            }
            ObjectNode answer = Pods.JSON.createObjectNode();
            answer.put("apiVersion", review.path("apiVersion").asString());
            answer.put("kind", "AdmissionReview");
            ObjectNode response = answer.putObject("response");
            response.put("uid", request.path().equals("/wrong-uid") ? "someone-else" : uid);
            response.put("allowed", true);
            ArrayNode patch = Pods.JSON.createArrayNode();
            ObjectNode add = patch.addObject();
            add.put("op", "add");
            add.put("path", "/metadata/labels");
            add.putObject("value").put("answered-by", "upstream");
            response.put("patchType", "JSONPatch");
            response.put("patch", Base64.getEncoder().encodeToString(Pods.JSON.writeValueAsBytes(patch)));
            Buffer bytes = Buffer.buffer(Pods.JSON.writeValueAsBytes(answer));
            upstreamAnswers.put(uid, bytes);
            request.response().putHeader("Content-Type", "application/json").end(bytes);
        });
    }

    static URI url(Upstream upstream, String path) {
        int port = switch (upstream) {
            case ANSWERS -> answering.actualPort();
            case SLOW -> silent.actualPort();
            case DOWN -> downPort;
            case UNTRUSTED -> untrusted.actualPort();
        };
        return URI.create("https://127.0.0.1:" + port + path);
    }

    static WebhookServer proxyTo(URI url, String localPath, FailurePolicy policy, PrometheusRegistry registry) {
        return proxyTo(url, localPath, TIMEOUT, policy, registry);
    }

    static WebhookServer proxyTo(URI url, String localPath, Duration timeout, FailurePolicy policy,
            PrometheusRegistry registry) {
        WebhookConfig config = WebhookFixture.loopback()
                .upstream(new UpstreamConfig(url, localPath, timeout, policy)).build();
        WebhookServer server = WebhookServer.builder(config).serverTls(fixture.pki.serverMaterial())
                .upstreamTls(upstreamPki.trustOnlyMaterial()).registry(registry).vertx(fixture.vertx).build();
        server.start();
        return server;
    }

    static ObjectNode gpuPod() {
        return pod("train").container(container("main").gpu("1")).build();
    }

    static Stream<Arguments> upstreamsAndPolicies() {
        return Stream.of(Upstream.values()).flatMap(upstream -> Stream.of(FailurePolicy.values())
                .map(policy -> Arguments.of(upstream, policy)));
    }

    @ParameterizedTest(name = "{0} under {1}")
    @MethodSource("upstreamsAndPolicies")
    void upstreamUnderFailurePolicy(Upstream upstream, FailurePolicy policy) {
        PrometheusRegistry registry = new PrometheusRegistry();
        URI url = url(upstream, "/webhook");
        Duration timeout = upstream == Upstream.SLOW ? SILENT_UPSTREAM_TIMEOUT : TIMEOUT;
        try (WebhookServer server = proxyTo(url, "/webhook", timeout, policy, registry)) {
            ObjectNode review = Reviews.podCreate(gpuPod());
            Admission admission = fixture.client.admit(server.port(), review);
            JsonNode response = admission.response();

            if (upstream == Upstream.ANSWERS) {
                // Passed through unchanged, whatever the failure policy.
                assertThat(admission.reply().body().getBytes())
                        .isEqualTo(upstreamAnswers.get(review.path("request").path("uid").asString()).getBytes());
                JsonNode patched = admission.patchedPod();
                assertThat(patched.path("metadata").path("labels").path("answered-by").asString())
                        .isEqualTo("upstream");
                assertThat(patched.path("spec").has("schedulerName")).isFalse();
                assertThat(server.recentAdmissions().snapshot().get(0).route())
                        .isEqualTo(AdmissionRecord.Route.UPSTREAM);
                assertThat(upstreamErrors(registry)).isZero();
                return;
            }

            String reason = switch (upstream) {
                case SLOW -> "timeout";
                case DOWN -> "connect";
                case UNTRUSTED -> "tls";
                default -> throw new IllegalStateException();
            };
            String cause = "upstream webhook " + url + " failed: " + switch (upstream) {
                case SLOW -> "no answer within 500ms";
                case DOWN -> "cannot connect to 127.0.0.1:" + downPort + " (";
                case UNTRUSTED -> "TLS handshake failed: server certificate";
                default -> throw new IllegalStateException();
            };
            assertThat(upstreamErrors(registry)).isEqualTo(1);
            assertThat(upstreamErrorsWithReason(registry, reason)).isEqualTo(1);
            switch (policy) {
                case FAIL_CLOSED -> {
                    assertThat(admission.allowed()).isFalse();
                    assertThat(admission.code()).isEqualTo(503);
                    assertThat(admission.message()).startsWith(cause);
                    assertThat(admission.patch()).isNull();
                    assertThat(response.has("warnings")).isFalse();
                }
                case FAIL_OPEN -> {
                    assertThat(admission.allowed()).isTrue();
                    assertThat(admission.code()).isEqualTo(200);
                    assertThat(admission.patch()).isNull();
                    assertThat(response.path("warnings")).hasSize(1);
                    assertThat(response.path("warnings").get(0).asString()).startsWith(cause)
                            .endsWith("; admitted without mutation (failure policy fail-open)");
                }
                case FALLBACK -> {
                    assertThat(admission.allowed()).isTrue();
                    JsonNode patched = admission.patchedPod();
                    assertThat(patched.path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
                    assertThat(patched.path("spec").path("containers").get(0).path("resources").path("limits")
                            .path("nvidia.com/gpucores").asString()).isEqualTo("100");
                    assertThat(response.path("warnings")).hasSize(1);
                    assertThat(response.path("warnings").get(0).asString()).startsWith(cause)
                            .endsWith("; answered by the built-in HAMi mutator (failure policy fallback)");
                }
                default -> throw new IllegalStateException();
            }
            assertThat(server.recentAdmissions().snapshot().get(0).route().label()).isEqualTo(policy.label());
        }
    }

    @Test
    void configuredPathGoesUpstreamWhileTheWebhookPathStaysBuiltIn() {
        try (WebhookServer server = proxyTo(url(Upstream.ANSWERS, "/webhook"), "/upstream",
                FailurePolicy.FAIL_CLOSED, new PrometheusRegistry())) {
            Admission viaUpstream = new Admission(Reviews.podCreate(gpuPod()), fixture.client.post(server.port(),
                    "/upstream", "application/json", Buffer.buffer(Pods.JSON.writeValueAsBytes(
                            Reviews.podCreate(gpuPod())))));
            assertThat(viaUpstream.reply().json().path("response").path("patch").asString()).isNotEmpty();
            Admission builtIn = fixture.client.admit(server.port(), Reviews.podCreate(gpuPod()));

            assertThat(builtIn.patchedPod().path("spec").path("schedulerName").asString()).isEqualTo("hami-scheduler");
            assertThat(server.recentAdmissions().snapshot()).extracting(AdmissionRecord::route)
                    .containsExactly(AdmissionRecord.Route.BUILT_IN, AdmissionRecord.Route.UPSTREAM);
        }
    }

    /** An answer for another request's uid, and an HTTP error with its body, are named as what they are. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "/wrong-uid | failed: answer is for uid 'someone-else', not ' | false | invalid_response",
        "/broken    | failed: answered HTTP 500: scheduler cache not synced | true | http_status"})
    void badUpstreamAnswersAreNamed(String path, String message, boolean atTheEnd, String reason) {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (WebhookServer server = proxyTo(url(Upstream.ANSWERS, path), "/webhook",
                FailurePolicy.FAIL_CLOSED, registry)) {
            Admission admission = fixture.client.admit(server.port(), Reviews.podCreate(gpuPod()));

            assertThat(admission.code()).isEqualTo(503);
            if (atTheEnd) {
                assertThat(admission.message()).endsWith(message);
            } else {
                assertThat(admission.message()).contains(message);
            }
            assertThat(upstreamErrorsWithReason(registry, reason)).isEqualTo(1);
        }
    }

    static double upstreamErrors(PrometheusRegistry registry) {
        return counter(registry).getDataPoints().stream().mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    static double upstreamErrorsWithReason(PrometheusRegistry registry, String reason) {
        return counter(registry).getDataPoints().stream().filter(p -> p.getLabels().equals(Labels.of("reason", reason)))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }

    static CounterSnapshot counter(PrometheusRegistry registry) {
        return (CounterSnapshot) registry.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals("tenant_gateway_webhook_upstream_errors"))
                .findFirst().orElseThrow();
    }
}
