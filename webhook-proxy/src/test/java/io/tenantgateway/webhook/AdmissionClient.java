package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.WebhookFixture.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.zjsonpatch.JsonPatch;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.vertx.VertxTls;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.time.Clock;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** A caller of the webhook over real HTTPS, like kube-apiserver: posts AdmissionReviews and reads the answer. */
final class AdmissionClient implements AutoCloseable {
    private final HttpClientAgent client;
    private final Context context;

    AdmissionClient(Vertx vertx, TlsMaterial material) {
        HttpClientOptions options = VertxTls.configureClient(new HttpClientOptions(), material, Clock.systemUTC());
        this.client = vertx.createHttpClient(options);
        this.context = vertx.getOrCreateContext();
    }

    Reply post(int port, String path, String contentType, Buffer body) {
        return send(HttpMethod.POST, port, path, contentType, body);
    }

    Reply send(HttpMethod method, int port, String path, String contentType, Buffer body) {
        RequestOptions request = new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port)
                .setURI(path);
        if (contentType != null) {
            request.putHeader("Content-Type", contentType);
        }
        // The whole exchange runs on one event loop: built from the test thread, a step could attach its
        // handler after the event loop has already delivered the response and its body.
        Promise<Reply> reply = Promise.promise();
        context.runOnContext(ignored -> client.request(request)
                .compose(sent -> sent.send(body))
                .compose(response -> response.body().map(bytes -> new Reply(response.statusCode(),
                        response.getHeader("Content-Type"), response.getHeader("Connection"), bytes)))
                .onComplete(reply));
        return await(reply.future());
    }

    /** Posts {@code review} as JSON to {@code /webhook}. */
    Admission admit(int port, ObjectNode review) {
        Reply reply = post(port, "/webhook", "application/json", Buffer.buffer(Pods.JSON.writeValueAsBytes(review)));
        return new Admission(review, reply);
    }

    static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("HTTPS call failed: " + e, e);
        }
    }

    @Override
    public void close() {
        await(client.close());
    }

    record Reply(int status, String contentType, String connection, Buffer body) {
        JsonNode json() {
            return Pods.JSON.readTree(body.getBytes());
        }
    }

    /** One admission: what was sent, what came back, and the pod after applying the returned patch. */
    record Admission(ObjectNode review, Reply reply) {
        JsonNode answer() {
            assertThat(reply.status()).as("HTTP status, body %s", reply.body()).isEqualTo(200);
            return reply.json();
        }

        JsonNode response() {
            JsonNode answer = answer();
            assertThat(answer.path("apiVersion").asString()).isEqualTo(review.path("apiVersion").asString());
            assertThat(answer.path("kind").asString()).isEqualTo("AdmissionReview");
            JsonNode response = answer.path("response");
            assertThat(response.path("uid").asString()).isEqualTo(review.path("request").path("uid").asString());
            return response;
        }

        boolean allowed() {
            return response().path("allowed").booleanValue();
        }

        int code() {
            return response().path("status").path("code").asInt();
        }

        String message() {
            return response().path("status").path("message").asString("");
        }

        String reason() {
            return response().path("status").path("reason").asString("");
        }

        /** The decoded JSON patch, or null when the answer has none (then patchType must be absent too). */
        ArrayNode patch() {
            JsonNode response = response();
            if (!response.has("patch")) {
                assertThat(response.has("patchType")).as("patchType without patch").isFalse();
                return null;
            }
            assertThat(response.path("patchType").asString()).isEqualTo("JSONPatch");
            ArrayNode patch = (ArrayNode) Pods.JSON.readTree(Base64.getDecoder().decode(response.path("patch")
                    .asString()));
            assertThat(patch).as("a patch field is only sent when there are operations").isNotEmpty();
            return patch;
        }

        /** The original pod with the returned patch applied (the original itself when there is no patch). */
        JsonNode patchedPod() {
            JsonNode original = review.path("request").path("object");
            ArrayNode patch = patch();
            return patch == null ? original : JsonPatch.apply(patch, original);
        }
    }
}
