package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.security.PrivateKey;
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

/**
 * {@link Pem}'s reader for everything {@link JdkPem} leaves: PKCS#1 RSA and SEC1 EC keys, EC PARAMETERS blocks,
 * encrypted keys (refused), mixed-up and malformed files (the errors {@link Pem} documents). A class of its own so
 * that reading plain files loads no Bouncy Castle class.
 */
final class BouncyCastlePem {
    private static final String DECRYPT_HINT = "encrypted private keys are not supported (expected: an unencrypted"
            + " key; decrypt it with `openssl pkey -in KEY -out KEY.plain`)";

    private BouncyCastlePem() {
    }

    /** Parses every CERTIFICATE block; other blocks are an error (a key in a cert file is a common mix-up). */
    static List<X509Certificate> parseCertificates(String pem, Path source) {
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
    static PrivateKey parsePrivateKey(String pem, Path source) {
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
