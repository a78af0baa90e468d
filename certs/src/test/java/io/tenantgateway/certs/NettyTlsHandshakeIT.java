package io.tenantgateway.certs;

import static io.tenantgateway.certs.TlsEchoServer.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.SslContext;
import io.tenantgateway.certs.testing.TestPki;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Real TLS handshakes on loopback between Netty endpoints built from issued certificates. */
@Timeout(60)
class NettyTlsHandshakeIT {
    private static final Clock CLOCK = Clock.systemUTC();
    private final TestPki pki = TestPki.create("tls");
    private TlsEchoServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private TlsEchoServer start(TlsMaterial material, ClientAuthMode clientAuth) throws InterruptedException {
        server = new TlsEchoServer(TlsContexts.server(material, clientAuth, CLOCK));
        return server;
    }

    private static String clientFailure(TlsEchoServer.Client client) {
        assertThat(client.handshake.isSuccess()).as("client handshake").isFalse();
        return TlsFailures.describe(client.handshake.cause());
    }

    /** What a server that requires a client certificate says about a client presenting {@code clientMaterial}. */
    private String serverFailure(TlsMaterial clientMaterial) throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.REQUIRE);
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(clientMaterial, CLOCK), "localhost")) {
            Throwable serverSide = server.serverHandshakeFailures.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(serverSide).as("server saw a failed handshake").isNotNull();
            return TlsFailures.describe(serverSide);
        }
    }

    @Test
    void validServerCertificateHandshakesAndEchoes() throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.NONE);
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(pki.trustOnlyMaterial(), CLOCK),
                "hami-scheduler.kube-system.svc")) {
            assertThat(client.handshake.isSuccess()).isTrue();
            assertThat(client.echo("hello")).isEqualTo("hello");
            assertThat(client.peerCertificate()).isEqualTo(pki.server().leaf());
        }
    }

    @Test
    void mutualTlsWithValidClientCertificate() throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.REQUIRE);
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(pki.clientMaterial(), CLOCK),
                "127.0.0.1")) {
            assertThat(client.handshake.isSuccess()).isTrue();
            assertThat(client.echo("mtls")).isEqualTo("mtls");
        }
    }

    @Test
    void serverFromAnotherCaIsRejectedNamingBothCas() throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.NONE);
        TestPki other = TestPki.create("other");
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(other.trustOnlyMaterial(), CLOCK),
                "localhost")) {
            assertThat(clientFailure(client)).isEqualTo("server certificate 'CN=tls-server' issued by CN=tls-ca is"
                    + " not signed by a trusted CA (trusted: [CN=other-ca])");
        }
    }

    @Test
    void expiredServerCertificateIsRejectedWithItsExpiry() throws Exception {
        Clock tenDaysAgo = Clock.fixed(Instant.now().minus(Duration.ofDays(10)), ZoneOffset.UTC);
        CertificateAuthority ca = CertificateAuthority.create("old-ca", KeyAlgorithm.EC_P256, Duration.ofDays(30),
                tenDaysAgo);
        CertBundle expired = ca.issue(CertificateRequest.server("old-server").dnsNames("localhost")
                .validity(Duration.ofDays(1)).build());
        start(TlsMaterial.of(expired, ca.trustBundle()), ClientAuthMode.NONE);

        try (TlsEchoServer.Client client = server.connect(
                TlsContexts.client(TlsMaterial.of(null, ca.trustBundle()), CLOCK), "localhost")) {
            assertThat(clientFailure(client)).startsWith("server certificate 'CN=old-server' expired at "
                    + expired.leaf().getNotAfter().toInstant() + " (now ");
        }
    }

    @Test
    void serverNameNotInSansIsRejectedListingTheNames() throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.NONE);
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(pki.trustOnlyMaterial(), CLOCK),
                "konnectivity.example.com")) {
            assertThat(clientFailure(client)).isEqualTo("server certificate 'CN=tls-server' does not match the name"
                    + " 'konnectivity.example.com' (its names: [DNS:localhost, DNS:hami-scheduler.kube-system.svc,"
                    + " DNS:tenant-gateway-webhook.kube-system.svc, IP:127.0.0.1, IP:::1])");
        }
    }

    @Test
    void missingClientCertificateIsRejectedWhenRequired() throws Exception {
        start(pki.serverMaterial(), ClientAuthMode.REQUIRE);
        try (TlsEchoServer.Client client = server.connect(TlsContexts.client(pki.trustOnlyMaterial(), CLOCK),
                "localhost")) {
            Throwable serverSide = server.serverHandshakeFailures.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(serverSide).as("server saw a failed handshake").isNotNull();
            assertThat(TlsFailures.describe(serverSide)).isEqualTo("client certificate required but none was"
                    + " presented (configure a client certificate and key signed by the server's client CA)");
            // TLS 1.3: the client may finish its side first; the server's alert then closes the connection.
            assertThat(client.channel.closeFuture().await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("client closed").isTrue();
        }
    }

    @Test
    void clientCertificateFromAnotherCaIsRejectedByTheServer() throws Exception {
        TestPki other = TestPki.create("rogue");
        assertThat(serverFailure(TlsMaterial.of(other.client(), pki.trust()))).isEqualTo("client certificate"
                + " 'CN=rogue-client,O=system:masters' issued by CN=rogue-ca is not signed by a trusted CA (trusted:"
                + " [CN=tls-ca])");
    }

    @Test
    void serverCertificateUsedAsClientCertificateIsRejectedForItsUsage() throws Exception {
        // A serverAuth-only certificate presented as a client certificate.
        assertThat(serverFailure(TlsMaterial.of(pki.server(), pki.trust()))).isEqualTo("client certificate"
                + " 'CN=tls-server' is not valid for clientAuth (its extendedKeyUsage: [1.3.6.1.5.5.7.3.1])");
    }

    @Test
    void alpnNegotiatesH2() throws Exception {
        server = new TlsEchoServer(TlsContexts.build(TlsContexts.alpn(
                TlsContexts.serverBuilder(pki.serverMaterial(), ClientAuthMode.NONE, CLOCK), "h2")));
        SslContext clientContext = TlsContexts.build(TlsContexts.alpn(
                TlsContexts.clientBuilder(pki.trustOnlyMaterial(), CLOCK), "h2"));
        try (TlsEchoServer.Client client = server.connect(clientContext, "localhost")) {
            assertThat(client.handshake.isSuccess()).isTrue();
            assertThat(client.channel.pipeline().get(io.netty.handler.ssl.SslHandler.class).applicationProtocol())
                    .isEqualTo("h2");
            assertThat(client.channel.pipeline().get(io.netty.handler.ssl.SslHandler.class).engine().getSession()
                    .getProtocol()).isIn("TLSv1.3", "TLSv1.2");
        }
    }

    @Test
    void rsaIdentitiesWork() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("rsa-ca", KeyAlgorithm.RSA_2048, Duration.ofDays(1),
                CLOCK);
        CertBundle serverIdentity = ca.issue(CertificateRequest.server("rsa").dnsNames("localhost")
                .keyAlgorithm(KeyAlgorithm.RSA_2048).build());
        CertBundle clientIdentity = ca.issue(CertificateRequest.client("rsa-client")
                .keyAlgorithm(KeyAlgorithm.RSA_2048).build());
        start(TlsMaterial.of(serverIdentity, ca.trustBundle()), ClientAuthMode.REQUIRE);
        SslContext clientContext = TlsContexts.client(TlsMaterial.of(clientIdentity, ca.trustBundle()), CLOCK);
        try (TlsEchoServer.Client client = server.connect(clientContext, "localhost")) {
            assertThat(client.handshake.isSuccess()).isTrue();
            assertThat(client.echo("rsa")).isEqualTo("rsa");
        }
    }
}
