package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.Pods.container;
import static io.tenantgateway.webhook.Pods.pod;
import static io.tenantgateway.webhook.WebhookFixture.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.ReloadingTlsMaterial;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.vertx.VertxTls;
import io.tenantgateway.certs.testing.TestPki;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Serving-certificate rotation without a restart, client-certificate verification and TLS versions. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsIT {
    @AutoClose
    private final WebhookFixture fixture = new WebhookFixture();

    /** What one HTTPS exchange saw: status, the server certificate, and the connection it used. */
    record Exchange(int status, BigInteger serverSerial, HttpConnection connection, String protocol) {
    }

    Exchange exchange(HttpClientAgent client, int port) {
        byte[] review = Pods.JSON.writeValueAsBytes(Reviews.podCreate(pod("p").container(container("c").gpu("1"))
                .build()));
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                .setURI("/webhook").putHeader("Content-Type", "application/json");
        Context context = fixture.vertx.getOrCreateContext();
        Promise<Exchange> result = Promise.promise();
        context.runOnContext(ignored -> client.request(options)
                .compose(request -> request.send(Buffer.buffer(review)))
                .compose(response -> response.body().map(body -> {
                    HttpConnection connection = response.request().connection();
                    try {
                        X509Certificate leaf = (X509Certificate) connection.peerCertificates().get(0);
                        return new Exchange(response.statusCode(), leaf.getSerialNumber(), connection,
                                connection.sslSession().getProtocol());
                    } catch (SSLPeerUnverifiedException e) {
                        throw new IllegalStateException(e);
                    }
                }))
                .onComplete(result));
        return AdmissionClient.await(result.future());
    }

    HttpClientAgent client(TlsMaterial material, Set<String> protocols) {
        HttpClientOptions options = VertxTls.configureClient(new HttpClientOptions().setKeepAlive(true), material,
                Clock.systemUTC());
        if (protocols != null) {
            options.setEnabledSecureTransportProtocols(protocols);
        }
        return fixture.vertx.createHttpClient(options, new PoolOptions().setHttp1MaxSize(1));
    }

    /** The kubelet's secret-volume layout: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/. */
    static void writeGeneration(Path dir, String generation, CertBundle bundle) throws IOException {
        Path target = Files.createDirectory(dir.resolve(".." + generation));
        Pem.writeBundle(bundle, target.resolve("tls.crt"), target.resolve("tls.key"));
        Path staging = dir.resolve("..data_tmp");
        Files.createSymbolicLink(staging, target.getFileName());
        Files.move(staging, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void servingCertificateRotatesWithoutRestartAndOpenConnectionsKeepWorking(@TempDir Path dir) throws IOException {
        TestPki pki = fixture.pki;
        writeGeneration(dir, "2026_01_01_00_00_00.1", pki.server());
        Files.createSymbolicLink(dir.resolve("tls.crt"), Path.of("..data", "tls.crt"));
        Files.createSymbolicLink(dir.resolve("tls.key"), Path.of("..data", "tls.key"));
        try (ReloadingTlsMaterial material = ReloadingTlsMaterial.load(
                TlsFiles.identity(dir.resolve("tls.crt"), dir.resolve("tls.key")), Duration.ofMillis(200))) {
            material.start();
            WebhookServer server = WebhookServer.builder(WebhookFixture.loopback().build()).serverTls(material)
                    .vertx(fixture.vertx).build();
            try (server) {
                server.start();
                HttpClientAgent keepAlive = client(pki.trustOnlyMaterial(), null);
                Exchange before = exchange(keepAlive, server.port());
                assertThat(before.status()).isEqualTo(200);
                assertThat(before.serverSerial()).isEqualTo(pki.server().leaf().getSerialNumber());

                CertBundle rotated = pki.ca().issue(CertificateRequest.server("webhook-rotated")
                        .dnsNames(TestPki.SERVER_DNS).ipAddresses(TestPki.SERVER_IPS).validity(Duration.ofDays(1))
                        .build());
                writeGeneration(dir, "2026_01_02_00_00_00.2", rotated);

                await().atMost(WAIT).untilAsserted(() -> {
                    HttpClientAgent fresh = client(pki.trustOnlyMaterial(), null);
                    try {
                        Exchange after = exchange(fresh, server.port());
                        assertThat(after.status()).isEqualTo(200);
                        assertThat(after.serverSerial()).isEqualTo(rotated.leaf().getSerialNumber());
                    } finally {
                        AdmissionClient.await(fresh.close());
                    }
                });

                Exchange again = exchange(keepAlive, server.port());
                assertThat(again.status()).isEqualTo(200);
                assertThat(again.connection()).as("same keep-alive connection").isSameAs(before.connection());
                assertThat(again.serverSerial()).as("negotiated before the rotation")
                        .isEqualTo(pki.server().leaf().getSerialNumber());
                AdmissionClient.await(keepAlive.close());
            }
        }
    }

    @Test
    void requiredClientCertificateIsVerified() {
        TestPki pki = fixture.pki;
        WebhookServer server = fixture.start(WebhookFixture.loopback().clientAuth(ClientAuthMode.REQUIRE).build());

        HttpClientAgent withCertificate = client(pki.clientMaterial(), null);
        assertThat(exchange(withCertificate, server.port()).status()).isEqualTo(200);

        HttpClientAgent anonymous = client(pki.trustOnlyMaterial(), null);
        assertThatThrownBy(() -> exchange(anonymous, server.port())).isInstanceOf(AssertionError.class);

        TestPki stranger = TestPki.create("stranger");
        HttpClientAgent strangerCertificate = client(TlsMaterial.of(stranger.client(), pki.trust()), null);
        assertThatThrownBy(() -> exchange(strangerCertificate, server.port())).isInstanceOf(AssertionError.class);
        assertThat(server.recentAdmissions().total()).as("only the verified caller got through").isEqualTo(1);
    }

    @Test
    void speaksTls13AndTls12() {
        WebhookServer server = fixture.start(WebhookFixture.loopback().build());

        assertThat(exchange(client(fixture.pki.trustOnlyMaterial(), null), server.port()).protocol())
                .isEqualTo("TLSv1.3");
        assertThat(exchange(client(fixture.pki.trustOnlyMaterial(), Set.of("TLSv1.2")), server.port()).protocol())
                .isEqualTo("TLSv1.2");
    }
}
