package io.tenantgateway.agent.ops;

import io.tenantgateway.certs.SubjectNames;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;

/**
 * One certificate of a chain as probe and doctor print it.
 *
 * @param subject the subject DN
 * @param issuer the issuer DN
 * @param notBefore start of validity
 * @param notAfter end of validity
 * @param names subject alternative names ({@code DNS:…}, {@code IP:…})
 */
public record CertificateInfo(String subject, String issuer, Instant notBefore, Instant notAfter,
        List<String> names) {
    public CertificateInfo {
        names = List.copyOf(names);
    }

    public static CertificateInfo of(X509Certificate certificate) {
        return new CertificateInfo(certificate.getSubjectX500Principal().getName(),
                certificate.getIssuerX500Principal().getName(), certificate.getNotBefore().toInstant(),
                certificate.getNotAfter().toInstant(), SubjectNames.of(certificate));
    }
}
