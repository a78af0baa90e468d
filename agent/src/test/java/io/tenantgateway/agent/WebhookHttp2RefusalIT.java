package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.vertx.VertxTls;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A red-team shape issue 24's tests did not cover: kube-apiserver sends its reviews to the webhook over one HTTP/2
 * connection. A review refused at once (413 for a declared length over the limit, 429 when the body budget is full)
 * was answered with {@code Connection: close} (a connection-specific header, which makes an HTTP/2 response
 * malformed: RFC 9113 8.2.2) and the whole connection closed, so every other review in flight on it went unanswered.
 * Now only the refused stream ends: its answer arrives clean and the review in flight beside it is admitted.
 */
@Timeout(60)
class WebhookHttp2RefusalIT extends AgentProcessTestBase {
    private static final String REVIEW = """
            {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",\
            "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1",\
            "resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"test"},\
            "object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},\
            "spec":{"containers":[{"name":"c","image":"busybox"}]}}}}""";

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aRefusedStreamEndsAloneAndTheReviewBesideItIsAdmitted() throws Exception {
        testbed = new TunnelTestbed(dir);
        int port = TunnelTestbed.freePort();
        agent = AgentProcess.launch(testbed.webhookArgs(port));
        agent.awaitLine("webhook listening", Duration.ofSeconds(60));
        HttpClient h2 = vertx.createHttpClient(VertxTls.configureClient(new HttpClientOptions(),
                testbed.pki.trustOnlyMaterial(), Clock.systemUTC()).setProtocolVersion(HttpVersion.HTTP_2)
                        .setUseAlpn(true), new PoolOptions().setHttp2MaxSize(1));
        byte[] review = REVIEW.getBytes(StandardCharsets.UTF_8);

        // A review in flight: its headers and the first bytes of its body.
        HttpClientRequest inFlight = get(h2.request(options(port)));
        inFlight.putHeader("Content-Length", Integer.toString(review.length));
        get(inFlight.write(Buffer.buffer(review).slice(0, 100)));
        assertThat(inFlight.version()).isEqualTo(HttpVersion.HTTP_2);

        // Beside it on the same connection, a review declared over the limit: answered 413 at once.
        HttpClientRequest oversized = get(h2.request(options(port)));
        assertThat(oversized.connection()).isSameAs(inFlight.connection());
        oversized.putHeader("Content-Length", "5000000");
        get(oversized.sendHead());
        // The body is asked for in the response callback, on the event loop: the server resets the stream right
        // after the answer (its body unread), and a body asked for later, from this thread, may miss the DATA.
        Answer refused = get(oversized.response().compose(Answer::read));
        assertThat(refused.status).isEqualTo(413);
        assertThat(refused.hasConnectionHeader).as("a Connection header in an HTTP/2 response").isFalse();
        assertThat(refused.body).contains("request entity is too large");

        // The review in flight completes on the same connection and is admitted.
        inFlight.end(Buffer.buffer(review).slice(100, review.length));
        Answer admitted = get(inFlight.response().compose(Answer::read));
        assertThat(admitted.status).isEqualTo(200);
        assertThat(admitted.body).contains("\"allowed\":true");
        assertThat(agent.process.isAlive()).isTrue();
    }

    private record Answer(int status, boolean hasConnectionHeader, String body) {
        static io.vertx.core.Future<Answer> read(HttpClientResponse response) {
            return response.body().map(body -> new Answer(response.statusCode(),
                    response.headers().contains("connection"), body.toString()));
        }
    }

    private static RequestOptions options(int port) {
        return new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port).setURI("/webhook")
                .putHeader("Content-Type", "application/json");
    }

    private <T> T get(io.vertx.core.Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
}
