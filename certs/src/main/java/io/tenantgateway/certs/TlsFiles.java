package io.tenantgateway.certs;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The PEM files TLS material is read from. Certificate and key come together or not at all; the CA file is
 * optional (a server without client authentication needs none, a client without a client certificate needs only it).
 */
public record TlsFiles(Optional<Path> certificate, Optional<Path> key, Optional<Path> ca) {

    public TlsFiles {
        certificate = certificate == null ? Optional.empty() : certificate;
        key = key == null ? Optional.empty() : key;
        ca = ca == null ? Optional.empty() : ca;
        if (certificate.isPresent() != key.isPresent()) {
            throw new IllegalArgumentException(certificate.isPresent()
                    ? "certificate " + certificate.get() + " given without a key file (expected: both or neither)"
                    : "key " + key.get() + " given without a certificate file (expected: both or neither)");
        }
        if (certificate.isEmpty() && ca.isEmpty()) {
            throw new IllegalArgumentException("TLS files: none given (expected: a certificate and key, a CA file,"
                    + " or all three)");
        }
    }

    public static TlsFiles identity(Path certificate, Path key) {
        return new TlsFiles(Optional.of(certificate), Optional.of(key), Optional.empty());
    }

    public static TlsFiles identityAndTrust(Path certificate, Path key, Path ca) {
        return new TlsFiles(Optional.of(certificate), Optional.of(key), Optional.of(ca));
    }

    public static TlsFiles trustOnly(Path ca) {
        return new TlsFiles(Optional.empty(), Optional.empty(), Optional.of(ca));
    }

    /** Every configured file, in a stable order. */
    public Set<Path> all() {
        Set<Path> files = new LinkedHashSet<>();
        certificate.ifPresent(files::add);
        key.ifPresent(files::add);
        ca.ifPresent(files::add);
        return files;
    }

    /** Reads and validates the files now. */
    TlsMaterial.Snapshot load(long generation) {
        CertBundle identity = certificate.isPresent() ? Pem.readBundle(certificate.get(), key.orElseThrow()) : null;
        TrustBundle trust = ca.map(Pem::readTrustBundle).orElse(null);
        return new TlsMaterial.Snapshot(generation, identity, trust);
    }
}
