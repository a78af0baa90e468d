package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.cert.jcajce.JcaX509CertificateHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CertificateAuthorityTest {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    @ParameterizedTest
    @EnumSource(KeyAlgorithm.class)
    void createsSelfSignedCaOfEachKeyType(KeyAlgorithm algorithm) throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("test-ca", algorithm, Duration.ofDays(10), CLOCK);
        X509Certificate cert = ca.certificate();

        assertThat(cert.getSubjectX500Principal()).isEqualTo(cert.getIssuerX500Principal());
        assertThat(cert.getBasicConstraints()).isGreaterThanOrEqualTo(0);
        assertThat(cert.getKeyUsage()[5]).as("keyCertSign").isTrue();
        assertThat(cert.getPublicKey().getAlgorithm()).isEqualTo(algorithm == KeyAlgorithm.EC_P256 ? "EC" : "RSA");
        cert.verify(cert.getPublicKey());
        assertThat(ca.bundle().chain()).containsExactly(cert);
    }

    @Test
    void issuesServerCertificateWithNamesUsagesAndIdentifiers() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("test-ca", KeyAlgorithm.EC_P256, Duration.ofDays(10),
                CLOCK);
        CertBundle server = ca.issue(CertificateRequest.server("hami-scheduler.kube-system.svc")
                .dnsNames("hami-scheduler.kube-system.svc", "localhost").ipAddresses("127.0.0.1", "::1")
                .validity(Duration.ofDays(2)).build());
        X509Certificate leaf = server.leaf();

        leaf.verify(ca.certificate().getPublicKey());
        assertThat(SubjectNames.of(leaf)).containsExactly("DNS:hami-scheduler.kube-system.svc", "DNS:localhost",
                "IP:127.0.0.1", "IP:::1");
        assertThat(leaf.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
        assertThat(leaf.getBasicConstraints()).isEqualTo(-1);
        assertThat(leaf.getKeyUsage()[0]).as("digitalSignature").isTrue();
        assertThat(leaf.getCriticalExtensionOIDs()).contains("2.5.29.15", "2.5.29.19");
        // Backdated by the default skew, valid for exactly the requested period after now.
        assertThat(leaf.getNotBefore().toInstant()).isEqualTo(NOW.minus(CertificateRequest.DEFAULT_BACKDATE));
        assertThat(leaf.getNotAfter().toInstant()).isEqualTo(NOW.plus(Duration.ofDays(2)));

        JcaX509CertificateHolder holder = new JcaX509CertificateHolder(leaf);
        JcaX509CertificateHolder caHolder = new JcaX509CertificateHolder(ca.certificate());
        AuthorityKeyIdentifier aki = AuthorityKeyIdentifier.fromExtensions(holder.getExtensions());
        SubjectKeyIdentifier caSki = SubjectKeyIdentifier.fromExtensions(caHolder.getExtensions());
        assertThat(aki.getKeyIdentifier()).isEqualTo(caSki.getKeyIdentifier());
        assertThat(holder.getExtension(Extension.subjectKeyIdentifier)).isNotNull();
    }

    @Test
    void issuesClientCertificateWithCommonNameAndOrganization() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("test-ca", KeyAlgorithm.RSA_2048, Duration.ofDays(10),
                CLOCK);
        CertBundle client = ca.issue(CertificateRequest.client("system:konnectivity-server")
                .organizations("system:masters").keyAlgorithm(KeyAlgorithm.RSA_2048).build());

        assertThat(client.leaf().getSubjectX500Principal().getName())
                .isEqualTo("CN=system:konnectivity-server,O=system:masters");
        assertThat(client.leaf().getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
        assertThat(client.leaf().getSubjectAlternativeNames()).isNull();
        // RSA keys also encipher (TLS 1.2 RSA key exchange).
        assertThat(client.leaf().getKeyUsage()[2]).as("keyEncipherment").isTrue();
    }

    @Test
    void serialsAreRandomPositiveAndAtMost128Bits() {
        CertificateAuthority ca = CertificateAuthority.create("test-ca", KeyAlgorithm.EC_P256, Duration.ofDays(10),
                CLOCK);
        Set<java.math.BigInteger> serials = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            java.math.BigInteger serial = ca.issue(CertificateRequest.client("c" + i).build()).leaf().getSerialNumber();
            assertThat(serial.signum()).isPositive();
            assertThat(serial.bitLength()).isLessThanOrEqualTo(128);
            serials.add(serial);
        }
        assertThat(serials).hasSize(20);
        assertThat(serials.stream().mapToInt(java.math.BigInteger::bitLength).max().orElseThrow())
                .as("at least one of 20 random 128-bit serials uses more than 120 bits").isGreaterThan(120);
    }

    @Test
    void leafValidityIsCappedAtTheCaExpiry() {
        CertificateAuthority ca = CertificateAuthority.create("short-ca", KeyAlgorithm.EC_P256, Duration.ofDays(1),
                CLOCK);
        CertBundle leaf = ca.issue(CertificateRequest.client("c").validity(Duration.ofDays(365)).build());
        assertThat(leaf.leaf().getNotAfter()).isEqualTo(ca.certificate().getNotAfter());
    }

    @Test
    void rejectsInvalidRequestsWithTheValueAndWhatWasExpected() {
        assertThatThrownBy(() -> CertificateRequest.server("x").dnsNames("ok.svc").ipAddresses("10.0.0.300").build())
                .hasMessage("IP address: '10.0.0.300' (expected: an IPv4 or IPv6 literal)");
        assertThatThrownBy(() -> CertificateRequest.server("x").build())
                .hasMessage("server certificate x: no DNS or IP names (expected: at least one subject alternative"
                        + " name)");
        assertThatThrownBy(() -> CertificateRequest.client("x").validity(Duration.ZERO).build())
                .hasMessage("validity: PT0S (expected: > 0)");
        assertThatThrownBy(() -> KeyAlgorithm.parse("dsa"))
                .hasMessage("key algorithm: dsa (expected one of: ec-p256, rsa-2048, rsa-4096)");
    }

    @Test
    void refusesALeafAsCaAndAKeyThatDoesNotMatch() {
        CertificateAuthority ca = CertificateAuthority.create("test-ca", KeyAlgorithm.EC_P256, Duration.ofDays(1),
                CLOCK);
        CertBundle leaf = ca.issue(CertificateRequest.client("c").build());
        CertBundle other = ca.issue(CertificateRequest.client("d").build());

        assertThatThrownBy(() -> CertificateAuthority.of(leaf, CLOCK)).hasMessageContaining("is not a CA");
        assertThatThrownBy(() -> new CertBundle(leaf.chain(), other.privateKey()))
                .hasMessageContaining("does not match certificate CN=c");
        assertThatThrownBy(() -> new CertBundle(List.of(), leaf.privateKey())).hasMessageContaining("empty");
    }
}
