package io.tenantgateway.certs.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.Action;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.Decision;
import io.tenantgateway.certs.policy.CertificateRotationPolicy.State;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CertificateRotationPolicyTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration YEAR = Duration.ofDays(365);
    private static final List<String> NAMES = List.of("svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local");
    private static final Duration BACKDATE = CertificateRequest.DEFAULT_BACKDATE;

    private static Clock at(Instant now) {
        return Clock.fixed(now, ZoneOffset.UTC);
    }

    private static CertificateRotationPolicy policy(Instant now) {
        return new CertificateRotationPolicy(YEAR, Duration.ofDays(30), Duration.ofDays(3650), Duration.ofHours(1),
                BACKDATE, NAMES, at(now));
    }

    private static CertificateAuthority ca(String name, Instant created, Duration validity) {
        return CertificateAuthority.create(name, KeyAlgorithm.EC_P256, validity, at(created));
    }

    private static X509Certificate leaf(CertificateAuthority ca, Instant issued, Duration validity, List<String> names) {
        CertBundle bundle = CertificateAuthority.of(ca.bundle(), at(issued)).issue(CertificateRequest.server(names.get(0))
                .dnsNames(names).validity(validity).build());
        return bundle.leaf();
    }

    private final CertificateAuthority ca = ca("ca", T0, Duration.ofDays(3650));
    private final X509Certificate fresh = leaf(ca, T0, YEAR, NAMES);

    private static Decision decide(Instant now, X509Certificate signing, List<X509Certificate> bundle,
            X509Certificate leaf) {
        return policy(now).decide(new State(signing, bundle, leaf));
    }

    @Test
    void aFreshCertificateIsKeptUntilItsRenewalTime() {
        Decision decision = decide(T0.plus(Duration.ofDays(10)), ca.certificate(), List.of(ca.certificate()), fresh);
        assertThat(decision.action()).isEqualTo(Action.KEEP);
        // 30 days before the certificate's notAfter: the earliest rule that comes due.
        assertThat(decision.nextCheck()).isEqualTo(T0.plus(YEAR).minus(Duration.ofDays(30)));
        assertThat(decision.reason()).startsWith("serving certificate valid until 2027-01-01T00:00:00Z");
    }

    @Test
    void noCaOrAnExpiredOneIssuesEverything() {
        assertThat(decide(T0, null, List.of(), null).action()).isEqualTo(Action.ISSUE);
        Decision expired = decide(T0.plus(Duration.ofDays(3651)), ca.certificate(), List.of(ca.certificate()), fresh);
        assertThat(expired.action()).isEqualTo(Action.ISSUE);
        assertThat(expired.reason()).isEqualTo("CA 'CN=ca' expired at 2035-12-30T00:00:00Z");
    }

    @Test
    void insideTheWindowTheCertificateIsRenewedAndTheCaKept() {
        Decision decision = decide(T0.plus(Duration.ofDays(340)), ca.certificate(), List.of(ca.certificate()), fresh);
        assertThat(decision.action()).isEqualTo(Action.RENEW);
        assertThat(decision.reason()).isEqualTo("serving certificate needs renewal before 30d: 25d left (until"
                + " 2027-01-01T00:00:00Z)");
    }

    @Test
    void aCertificateForOtherNamesOrFromAnUnpublishedCaIsRenewed() {
        X509Certificate otherNames = leaf(ca, T0, YEAR, List.of("old.ns.svc"));
        assertThat(decide(T0, ca.certificate(), List.of(ca.certificate()), otherNames).reason())
                .isEqualTo("serving certificate names [old.ns.svc] differ from [svc, svc.ns, svc.ns.svc,"
                        + " svc.ns.svc.cluster.local]");
        X509Certificate foreign = leaf(ca("foreign", T0, Duration.ofDays(3650)), T0, YEAR, NAMES);
        Decision decision = decide(T0, ca.certificate(), List.of(ca.certificate()), foreign);
        assertThat(decision.action()).isEqualTo(Action.RENEW);
        assertThat(decision.reason()).contains("is not signed by a published CA");
        assertThat(decide(T0, ca.certificate(), List.of(ca.certificate()), null).action()).isEqualTo(Action.RENEW);
    }

    /**
     * A CA with less than one certificate validity left is rotated; a serving certificate that is due too (issued
     * 350 days ago) is renewed from the old CA in the same write, a recent one (10 days) is kept.
     */
    @ParameterizedTest(name = "serving certificate issued {0} days ago: renewed first {1}")
    @CsvSource({"10, false", "350, true"})
    void aCaWithLessThanOneCertificateValidityLeftIsRotated(int issuedDaysAgo, boolean leafDue) {
        Instant now = T0.plus(Duration.ofDays(3650 - 364));
        X509Certificate leaf = leaf(ca, now.minus(Duration.ofDays(issuedDaysAgo)), YEAR, NAMES);
        Decision decision = decide(now, ca.certificate(), List.of(ca.certificate()), leaf);
        assertThat(decision.action()).isEqualTo(Action.ROTATE_CA);
        assertThat(decision.renewLeafFirst()).isEqualTo(leafDue);
        assertThat(decision.reason()).startsWith("CA 'CN=ca' needs renewal before 365d: 364d left");
        assertThat(decision.reason().contains("; serving certificate needs renewal before 30d"))
                .as(decision.reason()).isEqualTo(leafDue);
    }

    @Test
    void theCertificateMovesToANewCaOnlyAfterTheOverlap() {
        Instant rotated = T0.plus(Duration.ofDays(3650 - 364));
        CertificateAuthority next = ca("next", rotated, Duration.ofDays(3650));
        X509Certificate old = leaf(ca, rotated.minus(Duration.ofDays(10)), YEAR, NAMES);
        List<X509Certificate> bundle = List.of(next.certificate(), ca.certificate());

        Decision during = decide(rotated.plus(Duration.ofMinutes(30)), next.certificate(), bundle, old);
        assertThat(during.action()).isEqualTo(Action.KEEP);
        assertThat(during.nextCheck()).isEqualTo(rotated.plus(Duration.ofHours(1)));

        Decision after = decide(rotated.plus(Duration.ofHours(1)), next.certificate(), bundle, old);
        assertThat(after.action()).isEqualTo(Action.RENEW);
        assertThat(after.reason()).isEqualTo("serving certificate moves to the new CA 'CN=next' (published 1h ago)");

        // Moved: the old CA stays published (it signs nothing, but callers may still hold only it) until it expires.
        X509Certificate moved = leaf(next, rotated.plus(Duration.ofHours(1)), YEAR, NAMES);
        Decision kept = decide(rotated.plus(Duration.ofHours(2)), next.certificate(), bundle, moved);
        assertThat(kept.action()).isEqualTo(Action.KEEP);
        assertThat(kept.nextCheck()).isEqualTo(rotated.plus(Duration.ofHours(1)).plus(YEAR).minus(Duration.ofDays(30)));
        Instant oldExpiry = ca.certificate().getNotAfter().toInstant();
        X509Certificate renewedSince = leaf(next, oldExpiry.minus(Duration.ofDays(10)), YEAR, NAMES);
        Decision pruned = decide(oldExpiry, next.certificate(), bundle, renewedSince);
        assertThat(pruned.action()).isEqualTo(Action.PRUNE);
        assertThat(pruned.reason()).isEqualTo("expired CA 'CN=ca' still published");
    }

    @Test
    void theNextCheckIsTheEarliestDueRule() {
        Instant rotated = T0.plus(Duration.ofDays(3650 - 364));
        CertificateAuthority next = ca("next", rotated, Duration.ofDays(3650));
        X509Certificate moved = leaf(next, rotated.plus(Duration.ofDays(200)), YEAR, NAMES);
        // The old CA expires before the new certificate's renewal time: the prune comes first.
        Decision decision = decide(rotated.plus(Duration.ofDays(201)), next.certificate(),
                List.of(next.certificate(), ca.certificate()), moved);
        assertThat(decision.action()).isEqualTo(Action.KEEP);
        assertThat(decision.nextCheck()).isEqualTo(ca.certificate().getNotAfter().toInstant());
    }

    @Test
    void invalidSettingsNameTheSetting() {
        assertThatThrownBy(() -> new CertificateRotationPolicy(YEAR, YEAR, Duration.ofDays(3650), Duration.ZERO,
                BACKDATE, NAMES, at(T0))).hasMessageStartingWith("renewBefore: PT8760H (expected: > 0 and <");
        assertThatThrownBy(() -> new CertificateRotationPolicy(YEAR, Duration.ofDays(30), Duration.ofDays(700),
                Duration.ZERO, BACKDATE, NAMES, at(T0))).hasMessageStartingWith("caValidity: PT16800H (expected: at"
                        + " least twice");
        assertThatThrownBy(() -> new CertificateRotationPolicy(YEAR, Duration.ofDays(30), Duration.ofDays(3650),
                Duration.ZERO, BACKDATE, List.of(), at(T0))).hasMessageStartingWith("dnsNames: empty");
    }
}
