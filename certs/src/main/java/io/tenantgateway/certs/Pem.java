package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * PEM reading and writing. Reads certificates, PKCS#8 keys, PKCS#1 RSA keys and SEC1 EC keys; writes certificates
 * and PKCS#8. Every read error is a {@link CertificateFileException} naming the file (or source) and the problem.
 */
public final class Pem {
    private Pem() {
    }

    public static List<X509Certificate> readCertificates(Path file) {
        return parseCertificates(read(file), file);
    }

    public static PrivateKey readPrivateKey(Path file) {
        return parsePrivateKey(read(file), file);
    }

    /** Reads a certificate chain and its key; a key that does not belong to the leaf names both files. */
    public static CertBundle readBundle(Path certificateFile, Path keyFile) {
        List<X509Certificate> chain = readCertificates(certificateFile);
        PrivateKey key = readPrivateKey(keyFile);
        if (!CertBundle.keyMatches(chain.get(0), key)) {
            throw new CertificateFileException(keyFile, "private key does not match certificate "
                    + chain.get(0).getSubjectX500Principal().getName() + " in " + certificateFile
                    + " (expected: the key the certificate was issued for)");
        }
        return new CertBundle(chain, key);
    }

    public static TrustBundle readTrustBundle(Path file) {
        return new TrustBundle(readCertificates(file));
    }

    /**
     * Parses every CERTIFICATE block; other blocks are an error (a key in a cert file is a common mix-up). Plain PEM
     * (CERTIFICATE blocks only, no headers, strict base64, DER that the JDK reads back byte for byte) is read with the
     * JDK alone; anything else, errors included, by Bouncy Castle ({@link BouncyCastlePem}), so that the agent loads
     * its classes only for files that need them.
     */
    public static List<X509Certificate> parseCertificates(String pem, Path source) {
        requireNonNull(pem, "pem");
        List<X509Certificate> plain = JdkPem.certificates(pem);
        return plain != null ? plain : BouncyCastlePem.parseCertificates(pem, source);
    }

    /**
     * Parses exactly one private key: PKCS#8, PKCS#1 RSA or SEC1 EC (an EC PARAMETERS block before it is fine). One
     * unencrypted PKCS#8 EC or RSA key is read with the JDK alone, anything else by Bouncy Castle.
     */
    public static PrivateKey parsePrivateKey(String pem, Path source) {
        requireNonNull(pem, "pem");
        PrivateKey plain = JdkPem.privateKey(pem);
        return plain != null ? plain : BouncyCastlePem.parsePrivateKey(pem, source);
    }

    public static String encodeCertificates(List<X509Certificate> certificates) {
        StringBuilder out = new StringBuilder();
        for (X509Certificate certificate : certificates) {
            try {
                JdkPem.encode(out, "CERTIFICATE", certificate.getEncoded());
            } catch (CertificateEncodingException e) {
                throw new IllegalArgumentException("certificate " + certificate.getSubjectX500Principal().getName()
                        + " cannot be encoded: " + e.getMessage(), e);
            }
        }
        return out.toString();
    }

    /** PKCS#8 ({@code PRIVATE KEY}): the one format every TLS stack and openssl 3 reads for both RSA and EC. */
    public static String encodePrivateKey(PrivateKey key) {
        StringBuilder out = new StringBuilder();
        JdkPem.encode(out, "PRIVATE KEY", key.getEncoded());
        return out.toString();
    }

    /** Writes the chain and the key (key file mode 0600 where the file system supports it), atomically each. */
    public static void writeBundle(CertBundle bundle, Path certificateFile, Path keyFile) {
        writeAtomically(certificateFile, bundle.certificatePem(), false);
        writeAtomically(keyFile, bundle.privateKeyPem(), true);
    }

    public static void writeCertificates(List<X509Certificate> certificates, Path file) {
        writeAtomically(file, encodeCertificates(certificates), false);
    }

    private static void writeAtomically(Path file, String content, boolean secret) {
        Path absolute = file.toAbsolutePath();
        try {
            Files.createDirectories(absolute.getParent());
            Path temp = Files.createTempFile(absolute.getParent(), "." + absolute.getFileName(), ".tmp");
            try {
                if (secret) {
                    try {
                        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
                    } catch (UnsupportedOperationException ignored) {
                        // Not a POSIX file system (Windows): the directory's ACL applies.
                    }
                }
                Files.writeString(temp, content, StandardCharsets.US_ASCII);
                Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    static String read(Path file) {
        requireNonNull(file, "file");
        try {
            if (Files.isDirectory(file)) {
                throw new CertificateFileException(file, "is a directory (expected: a PEM file)");
            }
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new CertificateFileException(file, "file not found");
        } catch (AccessDeniedException e) {
            throw new CertificateFileException(file, "permission denied (the agent cannot read this file)");
        } catch (java.nio.charset.MalformedInputException e) {
            throw new CertificateFileException(file, "not a PEM text file (binary content; expected: PEM)");
        } catch (IOException e) {
            throw new CertificateFileException(file, "cannot read: " + e.getMessage(), e);
        }
    }
}
