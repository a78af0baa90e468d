package io.tenantgateway.certs;

import static io.tenantgateway.certs.TlsEchoServer.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.handler.ssl.SslContext;
import io.tenantgateway.certs.testing.TestPki;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Certificate rotation through a secret volume's {@code ..data} symlink flip while a TLS server runs. */
@Timeout(60)
class CertificateRotationIT {
    private static final Clock CLOCK = Clock.systemUTC();

    @TempDir
    Path dir;

    private static Map<String, String> secret(CertBundle identity, TrustBundle trust) {
        return Map.of("tls.crt", identity.certificatePem(), "tls.key", identity.privateKeyPem(), "ca.crt", trust.pem());
    }

    /** A TLS server on material reloaded from a secret volume (watched, polled every 30 s), and a client for it. */
    private static final class ServedVolume implements AutoCloseable {
        final SecretVolume volume;
        final ReloadingTlsMaterial material;
        final TlsEchoServer server;
        private final SslContext clientContext;

        ServedVolume(Path dir, TestPki pki) throws Exception {
            volume = new SecretVolume(dir, secret(pki.server(), pki.trust()));
            clientContext = TlsContexts.client(pki.trustOnlyMaterial(), CLOCK);
            material = ReloadingTlsMaterial.load(TlsFiles.identityAndTrust(volume.file("tls.crt"),
                    volume.file("tls.key"), volume.file("ca.crt")), Duration.ofSeconds(30));
            server = new TlsEchoServer(TlsContexts.server(material, ClientAuthMode.NONE, CLOCK));
            material.start();
        }

        TlsEchoServer.Client connect() throws InterruptedException {
            return server.connect(clientContext, "localhost");
        }

        @Override
        public void close() {
            try (material) {
                server.close();
            }
        }
    }

    @Test
    void newHandshakesSeeTheNewCertificateWhileOpenConnectionsKeepWorking() throws Exception {
        TestPki pki = TestPki.create("rotate");
        CertBundle first = pki.server();
        try (ServedVolume served = new ServedVolume(dir, pki)) {
            TlsEchoServer.Client before = served.connect();
            assertThat(before.echo("before")).isEqualTo("before");
            assertThat(before.peerCertificate()).isEqualTo(first.leaf());

            CertBundle second = pki.ca().issue(CertificateRequest.server("rotate-server-2").dnsNames("localhost")
                    .build());
            served.volume.update(secret(second, pki.trust()));

            // The poll interval is 30 s: seeing the new certificate sooner proves the directory watch fired.
            await().atMost(WAIT).untilAsserted(() -> {
                try (TlsEchoServer.Client after = served.connect()) {
                    assertThat(after.handshake.isSuccess()).isTrue();
                    assertThat(after.peerCertificate()).isEqualTo(second.leaf());
                }
            });
            assertThat(served.material.current().generation()).isEqualTo(2);

            // The connection opened before the swap is untouched.
            assertThat(before.echo("still open")).isEqualTo("still open");
            assertThat(before.peerCertificate()).isEqualTo(first.leaf());
            before.close();
        }
    }

    @Test
    void brokenUpdateKeepsTheCurrentMaterialAndNamesTheFile() throws Exception {
        TestPki pki = TestPki.create("broken");
        try (ServedVolume served = new ServedVolume(dir, pki)) {
            SecretVolume volume = served.volume;
            ReloadingTlsMaterial material = served.material;
            // A key that belongs to another certificate.
            volume.update(Map.of("tls.crt", pki.server().certificatePem(), "tls.key", pki.client().privateKeyPem(),
                    "ca.crt", pki.trust().pem()));

            await().atMost(WAIT).untilAsserted(() -> assertThat(material.lastFailure())
                    .isEqualTo(volume.file("tls.key") + ": private key does not match certificate CN=broken-server in "
                            + volume.file("tls.crt") + " (expected: the key the certificate was issued for)"));
            assertThat(material.current().generation()).isEqualTo(1);
            try (TlsEchoServer.Client client = served.connect()) {
                X509Certificate presented = client.peerCertificate();
                assertThat(presented).isEqualTo(pki.server().leaf());
                assertThat(client.echo("ok")).isEqualTo("ok");
            }

            // A good update after a bad one is picked up and clears the failure.
            CertBundle fixed = pki.ca().issue(CertificateRequest.server("broken-fixed").dnsNames("localhost").build());
            volume.update(secret(fixed, pki.trust()));
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(material.lastFailure()).isNull();
                assertThat(material.current().identityOrNull()).isEqualTo(fixed);
            });
        }
    }

    @Test
    void initialLoadFailsLoudlyWithTheFileName() throws Exception {
        TestPki pki = TestPki.create("initial");
        SecretVolume volume = new SecretVolume(dir, Map.of("tls.crt", "garbage", "tls.key",
                pki.server().privateKeyPem()));
        TlsFiles files = TlsFiles.identity(volume.file("tls.crt"), volume.file("tls.key"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ReloadingTlsMaterial.load(files, Duration.ofSeconds(1)))
                .isInstanceOf(CertificateFileException.class)
                .hasMessageStartingWith(volume.file("tls.crt") + ": no certificate found");
    }
}
