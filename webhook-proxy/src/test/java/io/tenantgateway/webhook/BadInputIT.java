package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.tenantgateway.webhook.AdmissionClient.Reply;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** Every malformed or out-of-bounds request gets its stated status and a message that names the problem. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BadInputIT {
    static final int LIMIT = WebhookConfig.DEFAULT_MAX_REQUEST_BYTES;
    static WebhookFixture fixture;
    static WebhookServer server;
    static PrometheusRegistry registry = new PrometheusRegistry();

    @BeforeAll
    static void start() {
        fixture = new WebhookFixture();
        server = fixture.start(WebhookFixture.loopback().build(), DeviceConfig.defaults(), null, registry);
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    static Reply post(String contentType, Buffer body) {
        return fixture.client.post(server.port(), "/webhook", contentType, body);
    }

    static Reply post(String contentType, String body) {
        return post(contentType, Buffer.buffer(body, "UTF-8"));
    }

    /** The status, and an AdmissionReview error answer carrying the same code and the message. */
    static void assertRejected(Reply reply, int status, String message) {
        assertThat(reply.status()).as("HTTP status, body %s", reply.body()).isEqualTo(status);
        assertThat(reply.contentType()).isEqualTo("application/json");
        JsonNode response = reply.json().path("response");
        assertThat(response.path("allowed").booleanValue()).isFalse();
        assertThat(response.path("status").path("code").asInt()).isEqualTo(status);
        assertThat(response.path("status").path("message").asString()).isEqualTo(message);
        assertThat(reply.body().toString()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    static String validReview() {
        return Pods.JSON.writeValueAsString(Reviews.podCreate(pod("p").container(container("main").gpu("1"))
                .build()));
    }

    @Test
    void bodyOverTheLimitIs413() {
        byte[] body = new byte[LIMIT + 1];
        Arrays.fill(body, (byte) ' ');
        assertRejected(post("application/json", Buffer.buffer(body)), 413,
                "request entity is too large; limit is 3407872 bytes");
    }

    @Test
    void bodyOfExactlyTheLimitIsAdmitted() {
        ObjectNode review = Reviews.podCreate(pod("big").container(container("main").gpu("1")).build());
        ObjectNode annotations = ((ObjectNode) review.path("request").path("object").path("metadata"))
                .putObject("annotations");
        annotations.put("padding", "");
        int size = Pods.JSON.writeValueAsBytes(review).length;
        annotations.put("padding", "x".repeat(LIMIT - size));
        byte[] body = Pods.JSON.writeValueAsBytes(review);
        assertThat(body).hasSize(LIMIT);

        Reply reply = post("application/json", Buffer.buffer(body));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.json().path("response").path("allowed").booleanValue()).isTrue();
        assertThat(reply.json().path("response").path("patchType").asString()).isEqualTo("JSONPatch");
    }

    @Test
    void farOversizedBodyIsAnswered413AndTheConnectionClosed() {
        WebhookServer small = fixture.start(WebhookFixture.loopback().maxRequestBytes(1024).build());
        byte[] body = new byte[64 * 1024]; // past 4 x the limit: the server stops reading
        Arrays.fill(body, (byte) ' ');

        Reply reply = fixture.client.post(small.port(), "/webhook", "application/json", Buffer.buffer(body));

        assertRejected(reply, 413, "request entity is too large; limit is 1024 bytes");
        assertThat(reply.connection()).isEqualTo("close");
        assertThat(small.recentAdmissions().snapshot().get(0).route()).isEqualTo(AdmissionRecord.Route.REJECTED);
        assertThat(small.isListening()).isTrue();
        small.close();
        assertThat(small.isListening()).isFalse();
    }

    @Test
    void wrongContentTypeIs400() {
        assertRejected(post("text/plain", validReview()), 400, "contentType=text/plain, expected application/json");
    }

    @Test
    void missingContentTypeIs400() {
        assertRejected(post(null, validReview()), 400, "contentType=, expected application/json");
    }

    @Test
    void jsonWithCharsetParameterIsAccepted() {
        assertThat(post("application/json; charset=utf-8", validReview()).status()).isEqualTo(200);
    }

    @Test
    void emptyBodyIs400() {
        assertRejected(post("application/json", Buffer.buffer()), 400, "request body is empty");
    }

    @Test
    void whitespaceOnlyBodyIsEmpty() {
        assertRejected(post("application/json", " \n "), 400, "request body is empty");
    }

    @Test
    void malformedJsonIs400NamingWhereAndWhat() {
        Reply reply = post("application/json", "{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": }");
        assertThat(reply.status()).isEqualTo(400);
        String message = reply.json().path("response").path("status").path("message").asString();
        assertThat(message).isEqualTo("malformed JSON at line 1, column 47: Unexpected character ('}' (code 125)):"
                + " expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')");
    }

    @Test
    void trailingGarbageIsMalformed() {
        Reply reply = post("application/json", validReview() + " {}");
        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().path("response").path("status").path("message").asString())
                .startsWith("malformed JSON at line 1");
    }

    @Test
    void missingRequestIs400() {
        assertRejected(post("application/json", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}"),
                400, "AdmissionReview has no request (expected: a request object with uid, kind, operation and"
                        + " object)");
    }

    @Test
    void missingRequestIsAnsweredInTheVersionReceived() {
        Reply reply = post("application/json",
                "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":null}");
        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().path("apiVersion").asString()).isEqualTo("admission.k8s.io/v1beta1");
    }

    @Test
    void requestWithoutUidIs400() {
        assertRejected(post("application/json", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                + "\"request\":{\"kind\":{\"kind\":\"Pod\"},\"operation\":\"CREATE\"}}"), 400,
                "AdmissionReview request.uid missing (expected: the request's UID)");
    }

    @Test
    void unsupportedApiVersionIs400() {
        assertRejected(post("application/json", "{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\","
                + "\"request\":{}}"), 400, "unsupported AdmissionReview apiVersion 'admission.k8s.io/v2' (expected:"
                + " admission.k8s.io/v1 or admission.k8s.io/v1beta1)");
    }

    @Test
    void jsonThatIsNotAnObjectIs400() {
        assertRejected(post("application/json", "[1,2]"), 400,
                "not an AdmissionReview: the body is an array (expected: a JSON object)");
    }

    @Test
    void getOnTheWebhookPathIs405AndUnknownPathsAre404() {
        Reply notFound = fixture.client.post(server.port(), "/mutate", "application/json",
                Buffer.buffer(validReview()));
        assertThat(notFound.status()).isEqualTo(404);
        assertThat(notFound.body().toString(StandardCharsets.UTF_8))
                .contains("no handler for /mutate (expected: POST /webhook)");
        Reply get = fixture.client.send(HttpMethod.GET, server.port(), "/webhook", null, Buffer.buffer());
        assertThat(get.status()).isEqualTo(405);
        assertThat(fixture.client.send(HttpMethod.GET, server.port(), "/healthz", null, Buffer.buffer()).status())
                .isEqualTo(200);
    }

    @Test
    void everyAnswerIsCountedByDecisionAndCode() {
        double before = requests("errored", "400");
        post("text/plain", validReview());
        post("application/json", Buffer.buffer());
        post("application/json", validReview());

        assertThat(requests("errored", "400")).isEqualTo(before + 2);
        assertThat(requests("allowed", "200")).isGreaterThanOrEqualTo(1);
        HistogramSnapshot duration = (HistogramSnapshot) registry.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals(
                        "tenant_gateway_webhook_request_duration_seconds"))
                .findFirst().orElseThrow();
        assertThat(duration.getDataPoints().get(0).getCount()).isGreaterThanOrEqualTo(3);
        assertThat(server.recentAdmissions().snapshot().get(0).route()).isEqualTo(AdmissionRecord.Route.BUILT_IN);
    }

    static double requests(String decision, String code) {
        CounterSnapshot counter = (CounterSnapshot) registry.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals("tenant_gateway_webhook_requests"))
                .findFirst().orElseThrow();
        return counter.getDataPoints().stream()
                .filter(p -> p.getLabels().equals(Labels.of("code", code, "decision", decision)))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }
}
