package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.certs.testing.TestPki;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What we issue, checked by an independent implementation: the machine's openssl. */
class OpensslInteropTest {
    @TempDir
    Path dir;

    @Test
    void opensslVerifiesIssuedCertificatesAgainstTheCa() throws Exception {
        TestPki.Files files = TestPki.create("interop").writeTo(dir);

        assertThat(Openssl.ok("verify", "-CAfile", files.caCert().toString(), files.serverCert().toString()))
                .contains(files.serverCert() + ": OK");
        assertThat(Openssl.ok("verify", "-CAfile", files.caCert().toString(), "-purpose", "sslclient",
                files.clientCert().toString())).contains(": OK");
        assertThat(Openssl.ok("verify", "-CAfile", files.caCert().toString(), "-purpose", "sslserver",
                "-verify_hostname", "hami-scheduler.kube-system.svc", files.serverCert().toString())).contains(": OK");
    }

    @Test
    void opensslRejectsACertificateFromAnotherCa() throws Exception {
        TestPki.Files one = TestPki.create("one").writeTo(dir.resolve("one"));
        TestPki.Files two = TestPki.create("two").writeTo(dir.resolve("two"));
        Openssl.Result result = Openssl.run("verify", "-CAfile", one.caCert().toString(), two.serverCert().toString());
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.output()).contains("unable to get local issuer certificate");
    }

    @Test
    void opensslShowsSansUsagesAndConstraints() throws Exception {
        TestPki.Files files = TestPki.create("text").writeTo(dir);

        String server = Openssl.ok("x509", "-in", files.serverCert().toString(), "-noout", "-text");
        assertThat(server).contains("DNS:localhost", "DNS:hami-scheduler.kube-system.svc",
                "DNS:tenant-gateway-webhook.kube-system.svc", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1",
                "TLS Web Server Authentication", "CA:FALSE", "Digital Signature", "X509v3 Subject Key Identifier",
                "X509v3 Authority Key Identifier", "Subject: CN = text-server");

        String client = Openssl.ok("x509", "-in", files.clientCert().toString(), "-noout", "-text");
        assertThat(client).contains("TLS Web Client Authentication", "O = system:masters, CN = text-client");

        String ca = Openssl.ok("x509", "-in", files.caCert().toString(), "-noout", "-text");
        assertThat(ca).contains("CA:TRUE", "Certificate Sign");
    }

    @Test
    void opensslReadsOurPkcs8Keys() throws Exception {
        TestPki.Files files = TestPki.create("keys").writeTo(dir);
        assertThat(Openssl.ok("pkey", "-in", files.serverKey().toString(), "-noout", "-text"))
                .contains("Private-Key: (256 bit");
        String certKey = Openssl.ok("x509", "-in", files.serverCert().toString(), "-noout", "-pubkey");
        String keyPub = Openssl.ok("pkey", "-in", files.serverKey().toString(), "-pubout");
        assertThat(certKey).isEqualTo(keyPub);
    }
}
