package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.certs.SubjectNames;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.certs.VerificationResult;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Judges a peer's certificate chain the way its real client would (kube-apiserver for a webhook, the agent for
 * konnectivity-server), one question at a time, so that the answer names the exact problem: validity period, CA,
 * name. Pure: the chain comes from a handshake that accepted it unverified (see {@link TlsHandshakes}).
 */
public final class ChainCheck {
    /** What can be wrong, in the order it is checked. */
    public enum Problem { NO_CERTIFICATE, EXPIRED, NOT_YET_VALID, UNTRUSTED, NAME_MISMATCH }

    /** One thing wrong with the chain. */
    public record Finding(Problem problem, String message) {
    }

    /**
     * The verdict.
     *
     * @param chain the certificates, leaf first
     * @param name the name the client checks
     * @param nameMatches whether the leaf's SANs cover {@code name}
     * @param trustChecked whether a CA was given to check the chain against
     * @param findings everything wrong, empty when the chain is fine
     */
    public record Result(List<CertificateInfo> chain, String name, boolean nameMatches, boolean trustChecked,
            List<Finding> findings) {
        public Result {
            chain = List.copyOf(chain);
            findings = List.copyOf(findings);
        }

        public boolean ok() {
            return findings.isEmpty();
        }

        public Optional<Finding> first() {
            return findings.stream().findFirst();
        }
    }

    private ChainCheck() {
    }

    /**
     * @param chain what the peer presented, leaf first
     * @param trust the CA bundle the real client uses; empty when unknown (then only period and name are checked)
     * @param name the host name or IP the real client verifies
     * @param now the time to judge validity at
     */
    public static Result evaluate(List<X509Certificate> chain, Optional<TrustBundle> trust, String name, Instant now) {
        requireNonNull(chain, "chain");
        requireNonNull(trust, "trust");
        requireNonNull(name, "name");
        requireNonNull(now, "now");
        List<CertificateInfo> infos = chain.stream().map(CertificateInfo::of).toList();
        List<Finding> findings = new ArrayList<>();
        if (chain.isEmpty()) {
            findings.add(new Finding(Problem.NO_CERTIFICATE, "the peer presented no certificate"));
            return new Result(infos, name, false, trust.isPresent(), findings);
        }
        boolean periodOk = true;
        for (X509Certificate certificate : chain) {
            String subject = "'" + certificate.getSubjectX500Principal().getName() + "'";
            if (now.isAfter(certificate.getNotAfter().toInstant())) {
                findings.add(new Finding(Problem.EXPIRED, "certificate " + subject + " expired at "
                        + certificate.getNotAfter().toInstant() + " (now " + now + ")"));
                periodOk = false;
            } else if (now.isBefore(certificate.getNotBefore().toInstant())) {
                findings.add(new Finding(Problem.NOT_YET_VALID, "certificate " + subject + " is not valid before "
                        + certificate.getNotBefore().toInstant() + " (now " + now + "); check the clocks"));
                periodOk = false;
            }
        }
        if (trust.isPresent() && periodOk) {
            VerificationResult verified = trust.get().verify(chain, now);
            if (!verified.valid()) {
                findings.add(new Finding(Problem.UNTRUSTED, verified.message()));
            }
        }
        X509Certificate leaf = chain.get(0);
        boolean nameMatches = SubjectNames.matches(leaf, name);
        if (!nameMatches) {
            findings.add(new Finding(Problem.NAME_MISMATCH, "certificate '" + leaf.getSubjectX500Principal().getName()
                    + "' does not match the name '" + name + "' (its names: " + SubjectNames.of(leaf) + ")"));
        }
        return new Result(infos, name, nameMatches, trust.isPresent(), findings);
    }
}
