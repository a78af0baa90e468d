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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RenewalPolicyTest {
    private static final Instant ISSUED = Instant.parse("2026-01-01T00:00:00Z");
    private final X509Certificate cert = CertificateAuthority.create("ca", KeyAlgorithm.EC_P256, Duration.ofDays(400),
            Clock.fixed(ISSUED, ZoneOffset.UTC)).issue(CertificateRequest.client("c").validity(Duration.ofDays(90))
            .build()).leaf();

    private RenewalPolicy.Status at(Instant now) {
        return new RenewalPolicy(Duration.ofDays(30), Clock.fixed(now, ZoneOffset.UTC)).evaluate(cert);
    }

    /** The certificate is valid for 90 days from ISSUED; renewal is due in its last 30. */
    @ParameterizedTest(name = "{0} after issue: {3}")
    @CsvSource(delimiter = '|', value = {
        "P10D    | false | false | valid until 2026-04-01T00:00:00Z (80d left)",
        "P70DT4H | true  | false | needs renewal before 30d: 19d 20h left (until 2026-04-01T00:00:00Z)",
        "P91D    | true  | true  | expired at 2026-04-01T00:00:00Z (1d ago)"})
    void statusAfterIssue(Duration age, boolean needsRenewal, boolean expired, String description) {
        RenewalPolicy.Status status = at(ISSUED.plus(age));
        assertThat(status.needsRenewal()).isEqualTo(needsRenewal);
        assertThat(status.expired()).isEqualTo(expired);
        assertThat(status.describe()).isEqualTo(description);
    }

    @Test
    void rejectsNegativeWindow() {
        assertThatThrownBy(() -> new RenewalPolicy(Duration.ofDays(-1), Clock.systemUTC()))
                .hasMessage("renewBefore: PT-24H (expected: >= 0)");
    }
}
