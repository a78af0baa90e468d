package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
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
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;
import org.bouncycastle.util.io.pem.PemObject;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * PEM reading and writing. Reads certificates, PKCS#8 keys, PKCS#1 RSA keys and SEC1 EC keys; writes certificates
 * and PKCS#8. Every read error is a {@link CertificateFileException} naming the file (or source) and the problem.
 */
public final class Pem {
    private static final String DECRYPT_HINT = "encrypted private keys are not supported (expected: an unencrypted"
            + " key; decrypt it with `openssl pkey -in KEY -out KEY.plain`)";

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

    /** Parses every CERTIFICATE block; other blocks are an error (a key in a cert file is a common mix-up). */
    public static List<X509Certificate> parseCertificates(String pem, Path source) {
        List<X509Certificate> certificates = new ArrayList<>();
        JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
        readBlocks(pem, source, "-----BEGIN CERTIFICATE----- blocks", object -> {
            if (object instanceof X509CertificateHolder holder) {
                certificates.add(converter.getCertificate(holder));
            } else {
                throw new CertificateFileException(source, "found " + describe(object)
                        + " where a certificate was expected (expected: -----BEGIN CERTIFICATE----- blocks)");
            }
        });
        if (certificates.isEmpty()) {
            throw new CertificateFileException(source,
                    "no certificate found (expected: a PEM file with -----BEGIN CERTIFICATE-----)");
        }
        return certificates;
    }

    /** Parses exactly one private key: PKCS#8, PKCS#1 RSA or SEC1 EC (an EC PARAMETERS block before it is fine). */
    public static PrivateKey parsePrivateKey(String pem, Path source) {
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        List<PrivateKey> keys = new ArrayList<>(1);
        readBlocks(pem, source, "-----BEGIN PRIVATE KEY-----", object -> {
            if (object instanceof ASN1ObjectIdentifier || object instanceof X9ECParameters) {
                return; // "EC PARAMETERS" emitted by `openssl ecparam -genkey`
            }
            if (object instanceof PKCS8EncryptedPrivateKeyInfo || object instanceof PEMEncryptedKeyPair) {
                throw new CertificateFileException(source, DECRYPT_HINT);
            }
            if (!keys.isEmpty()) {
                throw new CertificateFileException(source,
                        "more than one private key (expected: exactly one key per file)");
            }
            if (object instanceof PrivateKeyInfo info) {
                keys.add(converter.getPrivateKey(info));
            } else if (object instanceof PEMKeyPair pair) {
                keys.add(converter.getKeyPair(pair).getPrivate());
            } else {
                throw new CertificateFileException(source, "found " + describe(object)
                        + " where a private key was expected (expected: -----BEGIN PRIVATE KEY-----,"
                        + " RSA PRIVATE KEY or EC PRIVATE KEY)");
            }
        });
        if (keys.isEmpty()) {
            if (pem.contains("ENCRYPTED")) {
                throw new CertificateFileException(source, DECRYPT_HINT);
            }
            throw new CertificateFileException(source,
                    "no private key found (expected: a PEM file with -----BEGIN PRIVATE KEY-----)");
        }
        return keys.get(0);
    }

    /** What a parse does with each PEM block it reads; a {@link CertificateFileException} it throws is the answer. */
    private interface BlockReader {
        void read(Object block) throws IOException, CertificateException;
    }

    /**
     * Hands every PEM block of {@code pem} to {@code reader}; a parser failure is a {@link CertificateFileException}
     * saying "malformed PEM", with what was {@code expected}.
     */
    private static void readBlocks(String pem, Path source, String expected, BlockReader reader) {
        requireNonNull(pem, "pem");
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            Object object;
            while ((object = parser.readObject()) != null) {
                reader.read(object);
            }
        } catch (CertificateFileException e) {
            throw e; // the reader's own answer: an IllegalArgumentException too, not a parser failure
        } catch (IOException | IllegalArgumentException | IllegalStateException e) {
            throw new CertificateFileException(source, "malformed PEM (" + e.getMessage() + "); expected " + expected,
                    e);
        } catch (CertificateException e) {
            throw new CertificateFileException(source, "invalid certificate: " + e.getMessage(), e);
        }
    }

    public static String encodeCertificates(List<X509Certificate> certificates) {
        List<PemObject> blocks = new ArrayList<>();
        for (X509Certificate certificate : certificates) {
            try {
                blocks.add(new PemObject("CERTIFICATE", certificate.getEncoded()));
            } catch (CertificateEncodingException e) {
                throw new IllegalArgumentException("certificate " + certificate.getSubjectX500Principal().getName()
                        + " cannot be encoded: " + e.getMessage(), e);
            }
        }
        return encode(blocks);
    }

    /** PKCS#8 ({@code PRIVATE KEY}): the one format every TLS stack and openssl 3 reads for both RSA and EC. */
    public static String encodePrivateKey(PrivateKey key) {
        return encode(List.of(new PemObject("PRIVATE KEY", key.getEncoded())));
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

    private static String encode(List<PemObject> blocks) {
        StringWriter out = new StringWriter();
        try (PemWriter writer = new PemWriter(out)) {
            for (PemObject block : blocks) {
                writer.writeObject(block);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("PEM encoding failed", e);
        }
        return out.toString();
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

    private static String describe(Object object) {
        if (object instanceof X509CertificateHolder) {
            return "a certificate";
        }
        if (object instanceof PrivateKeyInfo || object instanceof PEMKeyPair) {
            return "a private key";
        }
        return "a " + object.getClass().getSimpleName() + " block";
    }
}
