package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.tenantgateway.certs.testing.TestPki;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PEM round trips, keys in every format openssl writes, and the errors for each kind of bad file. */
class PemTest {
    @TempDir
    Path dir;

    private final TestPki pki = TestPki.create("pem");

    @Test
    void roundTripsBundleAndTrust() {
        TestPki.Files files = pki.writeTo(dir);

        CertBundle server = Pem.readBundle(files.serverCert(), files.serverKey());
        assertThat(server.leaf()).isEqualTo(pki.server().leaf());
        assertThat(Pem.readTrustBundle(files.caCert()).certificates()).containsExactly(pki.ca().certificate());
        assertThat(server.privateKeyPem()).startsWith("-----BEGIN PRIVATE KEY-----");
    }

    @Test
    void writesKeysReadableOnlyByTheOwner() throws Exception {
        TestPki.Files files = pki.writeTo(dir);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(files.serverKey())))
                .isEqualTo("rw-------");
    }

    @Test
    void readsPkcs8Pkcs1AndSec1KeysWrittenByOpenssl() throws Exception {
        Path pkcs8 = dir.resolve("pkcs8.key");
        Path pkcs1 = dir.resolve("pkcs1.key");
        Path sec1 = dir.resolve("sec1.key");
        Openssl.ok("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pkcs8.toString());
        Openssl.ok("genrsa", "-traditional", "-out", pkcs1.toString(), "2048");
        Openssl.ok("ecparam", "-name", "prime256v1", "-genkey", "-out", sec1.toString());

        assertThat(Files.readString(pkcs1)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(Files.readString(sec1)).contains("-----BEGIN EC PARAMETERS-----", "-----BEGIN EC PRIVATE KEY-----");
        assertThat(Pem.readPrivateKey(pkcs8).getAlgorithm()).isEqualTo("EC");
        assertThat(Pem.readPrivateKey(pkcs1).getAlgorithm()).isEqualTo("RSA");
        PrivateKey ec = Pem.readPrivateKey(sec1);
        assertThat(ec.getAlgorithm()).isEqualTo("EC");

        // The SEC1 key works with a certificate openssl made for it.
        Path cert = dir.resolve("sec1.crt");
        Openssl.ok("req", "-new", "-x509", "-key", sec1.toString(), "-subj", "/CN=openssl", "-days", "1",
                "-out", cert.toString());
        assertThat(Pem.readBundle(cert, sec1).leaf().getSubjectX500Principal().getName()).isEqualTo("CN=openssl");
    }

    @Test
    void garbagePemNamesTheFile() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage.crt"), "this is not a certificate\n");
        assertThatThrownBy(() -> Pem.readCertificates(garbage))
                .isInstanceOf(CertificateFileException.class)
                .hasMessage(garbage + ": no certificate found (expected: a PEM file with -----BEGIN CERTIFICATE-----)");

        Path broken = Files.writeString(dir.resolve("broken.crt"),
                "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n");
        assertThatThrownBy(() -> Pem.readCertificates(broken))
                .isInstanceOf(CertificateFileException.class)
                .hasMessageStartingWith(broken + ": ");
    }

    @Test
    void keyThatDoesNotMatchTheCertificateNamesBothFiles() {
        TestPki.Files files = pki.writeTo(dir);
        assertThatThrownBy(() -> Pem.readBundle(files.serverCert(), files.clientKey()))
                .isInstanceOf(CertificateFileException.class)
                .hasMessage(files.clientKey() + ": private key does not match certificate CN=pem-server in "
                        + files.serverCert() + " (expected: the key the certificate was issued for)");
    }

    @Test
    void encryptedKeyIsRefusedWithHowToDecrypt() throws Exception {
        Path encrypted = dir.resolve("encrypted.key");
        Openssl.ok("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes-256-cbc",
                "-pass", "pass:secret", "-out", encrypted.toString());
        assertThatThrownBy(() -> Pem.readPrivateKey(encrypted))
                .isInstanceOf(CertificateFileException.class)
                .hasMessage(encrypted + ": encrypted private keys are not supported (expected: an unencrypted key;"
                        + " decrypt it with `openssl pkey -in KEY -out KEY.plain`)");
    }

    @Test
    void missingFile() {
        Path missing = dir.resolve("missing.crt");
        assertThatThrownBy(() -> Pem.readCertificates(missing))
                .isInstanceOf(CertificateFileException.class)
                .hasMessage(missing + ": file not found");
    }

    @Test
    void unreadableFile() throws Exception {
        Path locked = Files.writeString(dir.resolve("locked.crt"), pki.server().certificatePem());
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
        // root reads through permissions; the check only means something for an ordinary user.
        assumeThat(Files.isReadable(locked)).as("running as a user that permissions apply to").isFalse();
        assertThatThrownBy(() -> Pem.readCertificates(locked))
                .isInstanceOf(CertificateFileException.class)
                .hasMessage(locked + ": permission denied (the agent cannot read this file)");
    }

    @Test
    void directoryOrBinaryInsteadOfPem() throws Exception {
        Path directory = Files.createDirectory(dir.resolve("tls.crt"));
        assertThatThrownBy(() -> Pem.readCertificates(directory))
                .hasMessage(directory + ": is a directory (expected: a PEM file)");
        Path binary = Files.write(dir.resolve("cert.der"), pki.server().leaf().getEncoded());
        assertThatThrownBy(() -> Pem.readCertificates(binary))
                .hasMessage(binary + ": not a PEM text file (binary content; expected: PEM)");
    }

    @Test
    void keyInCertificateFileAndCertificateInKeyFile() throws Exception {
        Path keyAsCert = Files.writeString(dir.resolve("swapped.crt"), pki.server().privateKeyPem());
        assertThatThrownBy(() -> Pem.readCertificates(keyAsCert))
                .hasMessageContaining("found a private key where a certificate was expected");
        Path certAsKey = Files.writeString(dir.resolve("swapped.key"), pki.server().certificatePem());
        assertThatThrownBy(() -> Pem.readPrivateKey(certAsKey))
                .hasMessageContaining("found a certificate where a private key was expected");
    }

    /**
     * Plain files (what the agent, Kubernetes and cert-manager write) are read with the JDK alone, to the same
     * certificates and keys Bouncy Castle reads; anything else is left to Bouncy Castle. Written PEM is what Bouncy
     * Castle's PemWriter wrote.
     */
    @Test
    void plainFilesAreReadWithoutBouncyCastleToTheSameResult() throws Exception {
        CertBundle server = pki.server();
        String chain = server.certificatePem();
        String key = server.privateKeyPem();
        assertThat(JdkPem.certificates(chain)).isEqualTo(BouncyCastlePem.parseCertificates(chain, dir))
                .isEqualTo(server.chain());
        assertThat(JdkPem.privateKey(key)).isEqualTo(BouncyCastlePem.parsePrivateKey(key, dir))
                .isEqualTo(server.privateKey());
        assertThat(JdkPem.certificates(chain.replace("\n", "\r\n"))).as("CRLF").isEqualTo(server.chain());

        StringWriter written = new StringWriter();
        try (org.bouncycastle.util.io.pem.PemWriter writer = new org.bouncycastle.util.io.pem.PemWriter(written)) {
            writer.writeObject(new org.bouncycastle.util.io.pem.PemObject("CERTIFICATE",
                    server.leaf().getEncoded()));
        }
        assertThat(Pem.encodeCertificates(java.util.List.of(server.leaf()))).isEqualTo(written.toString());

        assertThat(JdkPem.certificates("subject=CN=x\n" + chain)).as("text before the block").isNull();
        assertThat(JdkPem.certificates(key)).as("a key").isNull();
        assertThat(JdkPem.certificates(chain.replace("-----END CERTIFICATE-----", ""))).as("unterminated").isNull();
        assertThat(JdkPem.certificates(chain.replaceFirst("\n.", "\n!"))).as("bad base64").isNull();
        assertThat(JdkPem.privateKey(key + key)).as("two keys").isNull();
        assertThat(JdkPem.privateKey(key.replace("BEGIN PRIVATE KEY", "BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED"
                + "\n-----X"))).as("headers").isNull();
    }
}
