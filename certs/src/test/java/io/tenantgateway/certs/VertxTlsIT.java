package io.tenantgateway.certs;

import static io.tenantgateway.certs.TlsEchoServer.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.certs.vertx.VertxTls;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Vert.x server and client options built from the same material as the Netty contexts. */
@Timeout(60)
class VertxTlsIT {
    private final Vertx vertx = Vertx.vertx();
    private final TestPki pki = TestPki.create("vertx");

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private int serve(ClientAuthMode clientAuth) throws Exception {
        HttpServerOptions options = VertxTls.configureServer(new HttpServerOptions(), pki.serverMaterial(), clientAuth,
                Clock.systemUTC());
        HttpServer server = vertx.createHttpServer(options).requestHandler(request -> request.response().end("ok"));
        return server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS)
                .actualPort();
    }

    private String get(TlsMaterial clientMaterial, int port) throws Exception {
        HttpClient client = vertx.createHttpClient(VertxTls.configureClient(new HttpClientOptions(), clientMaterial,
                Clock.systemUTC()));
        // Build the request chain on a Vert.x context: off-context, a fast response can race the handler setup.
        java.util.concurrent.CompletableFuture<String> body = new java.util.concurrent.CompletableFuture<>();
        vertx.runOnContext(ignored -> client.request(HttpMethod.GET, port, "localhost", "/")
                .compose(request -> request.send().compose(response -> response.body()))
                .onSuccess(buffer -> body.complete(buffer.toString()))
                .onFailure(body::completeExceptionally));
        try {
            return body.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
        }
    }

    @Test
    void mutualTlsRequestSucceeds() throws Exception {
        assertThat(get(pki.clientMaterial(), serve(ClientAuthMode.REQUIRE))).isEqualTo("ok");
    }

    @Test
    void clientWithoutCertificateIsRefusedWhenRequired() throws Exception {
        int port = serve(ClientAuthMode.REQUIRE);
        assertThatThrownBy(() -> get(pki.trustOnlyMaterial(), port)).isNotNull();
    }

    @Test
    void clientTrustingAnotherCaGetsTheReason() throws Exception {
        int port = serve(ClientAuthMode.NONE);
        assertThatThrownBy(() -> get(TestPki.create("elsewhere").trustOnlyMaterial(), port))
                .satisfies(e -> assertThat(TlsFailures.describe(e)).isEqualTo("server certificate 'CN=vertx-server'"
                        + " issued by CN=vertx-ca is not signed by a trusted CA (trusted: [CN=elsewhere-ca])"));
    }
}
