package io.tenantgateway.certs.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RenewalPolicyTest {
    private static final Instant ISSUED = Instant.parse("2026-01-01T00:00:00Z");
    private final X509Certificate cert = CertificateAuthority.create("ca", KeyAlgorithm.EC_P256, Duration.ofDays(400),
            Clock.fixed(ISSUED, ZoneOffset.UTC)).issue(CertificateRequest.client("c").validity(Duration.ofDays(90))
            .build()).leaf();

    private RenewalPolicy.Status at(Instant now) {
        return new RenewalPolicy(Duration.ofDays(30), Clock.fixed(now, ZoneOffset.UTC)).evaluate(cert);
    }

    @Test
    void freshCertificateNeedsNothing() {
        RenewalPolicy.Status status = at(ISSUED.plus(Duration.ofDays(10)));
        assertThat(status.needsRenewal()).isFalse();
        assertThat(status.describe()).isEqualTo("valid until 2026-04-01T00:00:00Z (80d left)");
    }

    @Test
    void insideTheWindowNeedsRenewal() {
        RenewalPolicy.Status status = at(ISSUED.plus(Duration.ofDays(70)).plus(Duration.ofHours(4)));
        assertThat(status.needsRenewal()).isTrue();
        assertThat(status.expired()).isFalse();
        assertThat(status.describe())
                .isEqualTo("needs renewal before 30d: 19d 20h left (until 2026-04-01T00:00:00Z)");
    }

    @Test
    void pastNotAfterIsExpired() {
        RenewalPolicy.Status status = at(ISSUED.plus(Duration.ofDays(91)));
        assertThat(status.expired()).isTrue();
        assertThat(status.describe()).isEqualTo("expired at 2026-04-01T00:00:00Z (1d ago)");
    }

    @Test
    void rejectsNegativeWindow() {
        assertThatThrownBy(() -> new RenewalPolicy(Duration.ofDays(-1), Clock.systemUTC()))
                .hasMessage("renewBefore: PT-24H (expected: >= 0)");
    }
}
