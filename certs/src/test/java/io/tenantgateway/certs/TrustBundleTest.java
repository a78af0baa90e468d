package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrustBundleTest {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private final CertificateAuthority ca = CertificateAuthority.create("ca-one", KeyAlgorithm.EC_P256,
            Duration.ofDays(10), CLOCK);
    private final CertificateAuthority otherCa = CertificateAuthority.create("ca-two", KeyAlgorithm.EC_P256,
            Duration.ofDays(10), CLOCK);
    private final CertBundle leaf = ca.issue(CertificateRequest.server("svc").dnsNames("svc.ns.svc")
            .validity(Duration.ofDays(1)).build());

    @Test
    void acceptsChainFromTrustedCa() {
        VerificationResult result = ca.trustBundle().verify(leaf.chain(), NOW);
        assertThat(result.valid()).isTrue();
        assertThat(result.message()).isEqualTo("certificate 'CN=svc' chains to 'CN=ca-one'");
    }

    @Test
    void acceptsChainThatIncludesItsRoot() {
        assertThat(ca.trustBundle().verify(List.of(leaf.leaf(), ca.certificate()), NOW).valid()).isTrue();
    }

    @Test
    void namesTheWrongCa() {
        VerificationResult result = otherCa.trustBundle().verify(leaf.chain(), NOW);
        assertThat(result.valid()).isFalse();
        assertThat(result.message()).isEqualTo("certificate 'CN=svc' issued by CN=ca-one is not signed by a trusted"
                + " CA (trusted: [CN=ca-two])");
    }

    @Test
    void namesExpiryAndNotYetValid() {
        VerificationResult expired = ca.trustBundle().verify(leaf.chain(), NOW.plus(Duration.ofDays(2)));
        assertThat(expired.message()).isEqualTo("certificate 'CN=svc' expired at 2026-12-01T12:00:00Z (now"
                + " 2026-12-02T12:00:00Z)");
        VerificationResult early = ca.trustBundle().verify(leaf.chain(), NOW.minus(Duration.ofHours(1)));
        assertThat(early.message()).startsWith("certificate 'CN=svc' is not valid before 2026-11-30T11:55:00Z");
    }

    @Test
    void emptyChainIsAFailureNotAnException() {
        assertThat(ca.trustBundle().verify(List.of(), NOW).message())
                .isEqualTo("no certificate presented (expected: a certificate chain)");
    }
}
