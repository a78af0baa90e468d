package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.security.GeneralSecurityException;
import java.security.cert.CertPath;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The CA certificates a peer is checked against (a {@code ca.crt} / caBundle). Immutable.
 * {@link #verify} gives a reason a person can act on instead of a bare PKIX exception.
 */
public record TrustBundle(List<X509Certificate> certificates) {

    public TrustBundle {
        requireNonNull(certificates, "certificates");
        certificates = List.copyOf(certificates);
        if (certificates.isEmpty()) {
            throw new IllegalArgumentException("CA bundle: no certificates (expected: at least one CA certificate)");
        }
    }

    public String pem() {
        return Pem.encodeCertificates(certificates);
    }

    /** Subjects of the trusted CAs, for messages. */
    public String describe() {
        return certificates.stream().map(c -> c.getSubjectX500Principal().getName())
                .collect(Collectors.joining("; ", "[", "]"));
    }

    /**
     * Validates {@code chain} (leaf first, intermediates after) against these CAs at {@code at}. Checks
     * signatures, validity periods and CA constraints; does not check revocation or host names.
     */
    public VerificationResult verify(List<X509Certificate> chain, Instant at) {
        requireNonNull(chain, "chain");
        requireNonNull(at, "at");
        if (chain.isEmpty()) {
            return VerificationResult.failed("no certificate presented (expected: a certificate chain)");
        }
        X509Certificate leaf = chain.get(0);
        // Check the period ourselves first: the message names the certificate and both instants.
        for (X509Certificate cert : chain) {
            if (at.isAfter(cert.getNotAfter().toInstant())) {
                return VerificationResult.failed("certificate " + subject(cert) + " expired at "
                        + cert.getNotAfter().toInstant() + " (now " + at + ")");
            }
            if (at.isBefore(cert.getNotBefore().toInstant())) {
                return VerificationResult.failed("certificate " + subject(cert) + " is not valid before "
                        + cert.getNotBefore().toInstant() + " (now " + at + "); check the clocks");
            }
        }
        try {
            Set<TrustAnchor> anchors = new HashSet<>();
            certificates.forEach(ca -> anchors.add(new TrustAnchor(ca, null)));
            PKIXParameters parameters = new PKIXParameters(anchors);
            parameters.setRevocationEnabled(false);
            parameters.setDate(Date.from(at));
            List<X509Certificate> path = new ArrayList<>(chain);
            // A chain that includes its own root: PKIX wants the path without the anchor.
            if (path.size() > 1 && certificates.contains(path.get(path.size() - 1))) {
                path.remove(path.size() - 1);
            }
            CertPath certPath = CertificateFactory.getInstance("X.509").generateCertPath(path);
            CertPathValidator.getInstance("PKIX").validate(certPath, parameters);
            return VerificationResult.ok("certificate " + subject(leaf) + " chains to "
                    + subject(issuerOf(chain)));
        } catch (CertPathValidatorException e) {
            if (e.getReason() == CertPathValidatorException.BasicReason.INVALID_SIGNATURE
                    || e.getReason() == CertPathValidatorException.BasicReason.UNSPECIFIED
                    || e.getReason() == CertPathValidatorException.BasicReason.UNDETERMINED_REVOCATION_STATUS
                    || String.valueOf(e.getMessage()).contains("anchor")) {
                return VerificationResult.failed("certificate " + subject(leaf) + " issued by "
                        + leaf.getIssuerX500Principal().getName() + " is not signed by a trusted CA (trusted: "
                        + describe() + ")");
            }
            return VerificationResult.failed("certificate " + subject(leaf) + " rejected: " + e.getMessage());
        } catch (GeneralSecurityException e) {
            return VerificationResult.failed("certificate " + subject(leaf) + " cannot be validated: "
                    + e.getMessage());
        }
    }

    private X509Certificate issuerOf(List<X509Certificate> chain) {
        X509Certificate last = chain.get(chain.size() - 1);
        for (X509Certificate ca : certificates) {
            if (ca.getSubjectX500Principal().equals(last.getIssuerX500Principal())) {
                return ca;
            }
        }
        return last;
    }

    static String subject(X509Certificate cert) {
        return "'" + cert.getSubjectX500Principal().getName() + "'";
    }
}
