package io.tenantgateway.certs.testing;

import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsFiles;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * A throw-away PKI for tests in every module: one CA, a server certificate for loopback names and a client
 * certificate, in memory and (on request) as PEM files.
 *
 * <pre>{@code
 * TestPki pki = TestPki.create("tenant-a");
 * TlsMaterial server = pki.serverMaterial();            // serving identity + CA for client certs
 * TlsMaterial client = pki.clientMaterial();            // client identity + CA for the server
 * TestPki.Files files = pki.writeTo(tempDir);           // ca.crt, server.crt/key, client.crt/key
 * }</pre>
 */
public final class TestPki {
    /** Names on the server certificate: what tests dial (loopback) and what webhooks are called in a cluster. */
    public static final String[] SERVER_DNS = {"localhost", "hami-scheduler.kube-system.svc",
        "tenant-gateway-webhook.kube-system.svc"};
    public static final String[] SERVER_IPS = {"127.0.0.1", "::1"};

    private final CertificateAuthority ca;
    private final CertBundle server;
    private final CertBundle client;

    private TestPki(CertificateAuthority ca, CertBundle server, CertBundle client) {
        this.ca = ca;
        this.server = server;
        this.client = client;
    }

    public static TestPki create(String name) {
        return create(name, Clock.systemUTC());
    }

    /** A PKI whose certificates are issued "now" according to {@code clock} (a past clock gives expired certs). */
    public static TestPki create(String name, Clock clock) {
        CertificateAuthority ca = CertificateAuthority.create(name + "-ca", KeyAlgorithm.EC_P256,
                Duration.ofDays(30), clock);
        CertBundle server = ca.issue(CertificateRequest.server(name + "-server").dnsNames(SERVER_DNS)
                .ipAddresses(SERVER_IPS).validity(Duration.ofDays(1)).build());
        CertBundle client = ca.issue(CertificateRequest.client(name + "-client")
                .organizations("system:masters").validity(Duration.ofDays(1)).build());
        return new TestPki(ca, server, client);
    }

    public CertificateAuthority ca() {
        return ca;
    }

    public TrustBundle trust() {
        return ca.trustBundle();
    }

    public CertBundle server() {
        return server;
    }

    public CertBundle client() {
        return client;
    }

    /** Server identity, trusting this CA for client certificates. */
    public TlsMaterial serverMaterial() {
        return TlsMaterial.of(server, trust());
    }

    /** Client identity, trusting this CA for the server. */
    public TlsMaterial clientMaterial() {
        return TlsMaterial.of(client, trust());
    }

    /** Trust only: a client without a certificate. */
    public TlsMaterial trustOnlyMaterial() {
        return TlsMaterial.of(null, trust());
    }

    /** Writes {@code ca.crt}, {@code ca.key}, {@code server.crt/.key}, {@code client.crt/.key} into a directory. */
    public Files writeTo(Path directory) {
        Files files = new Files(directory.resolve("ca.crt"), directory.resolve("ca.key"),
                directory.resolve("server.crt"), directory.resolve("server.key"),
                directory.resolve("client.crt"), directory.resolve("client.key"));
        Pem.writeBundle(ca.bundle(), files.caCert(), files.caKey());
        Pem.writeBundle(server, files.serverCert(), files.serverKey());
        Pem.writeBundle(client, files.clientCert(), files.clientKey());
        return files;
    }

    /** Paths written by {@link #writeTo}. */
    public record Files(Path caCert, Path caKey, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {
        public TlsFiles serverTlsFiles() {
            return TlsFiles.identityAndTrust(serverCert, serverKey, caCert);
        }

        public TlsFiles clientTlsFiles() {
            return TlsFiles.identityAndTrust(clientCert, clientKey, caCert);
        }
    }
}
