package io.tenantgateway.certs;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SubjectNamesTest {
    private final X509Certificate cert = CertificateAuthority.create("ca", KeyAlgorithm.EC_P256, Duration.ofDays(1),
            Clock.systemUTC()).issue(CertificateRequest.server("s").dnsNames("svc.ns.svc", "*.apps.example")
            .ipAddresses("127.0.0.1", "::1").build()).leaf();

    @Test
    void matchesExactDnsNamesCaseInsensitively() {
        assertThat(SubjectNames.matches(cert, "svc.ns.svc")).isTrue();
        assertThat(SubjectNames.matches(cert, "SVC.NS.SVC.")).isTrue();
        assertThat(SubjectNames.matches(cert, "other.ns.svc")).isFalse();
    }

    @Test
    void wildcardCoversExactlyOneLabel() {
        assertThat(SubjectNames.matches(cert, "a.apps.example")).isTrue();
        assertThat(SubjectNames.matches(cert, "a.b.apps.example")).isFalse();
        assertThat(SubjectNames.matches(cert, "apps.example")).isFalse();
    }

    @Test
    void ipLiteralsMatchOnlyIpNames() {
        assertThat(SubjectNames.matches(cert, "127.0.0.1")).isTrue();
        assertThat(SubjectNames.matches(cert, "[::1]")).isTrue();
        assertThat(SubjectNames.matches(cert, "0:0:0:0:0:0:0:1")).isTrue();
        assertThat(SubjectNames.matches(cert, "127.0.0.2")).isFalse();
    }
}
