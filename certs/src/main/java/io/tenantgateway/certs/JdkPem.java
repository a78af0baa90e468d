package io.tenantgateway.certs;

import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * {@link Pem}'s reader for plain files, with the JDK alone: CERTIFICATE blocks, and one unencrypted PKCS#8 EC or RSA
 * key. It answers only when a file is exactly that; for anything else (other blocks, headers, text around the blocks,
 * bad base64 or DER, other key types) it answers {@code null} and {@link BouncyCastlePem} reads the file, so results
 * and error messages stay Bouncy Castle's. Writing PEM is here too (64-character base64 lines, as openssl writes).
 */
final class JdkPem {
    private static final String BEGIN = "-----BEGIN ";
    private static final String END = "-----END ";
    private static final String DASHES = "-----";
    /** id-ecPublicKey, 1.2.840.10045.2.1. */
    private static final byte[] EC_OID = {0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};
    /** rsaEncryption, 1.2.840.113549.1.1.1. */
    private static final byte[] RSA_OID = {0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01};

    private JdkPem() {
    }

    /** One PEM block: its label ({@code CERTIFICATE}) and content. */
    private record Block(String label, byte[] der) {
    }

    /** Every certificate of a file of CERTIFICATE blocks only, or null. */
    static List<X509Certificate> certificates(String pem) {
        List<Block> blocks = blocks(pem);
        if (blocks == null || blocks.isEmpty()) {
            return null;
        }
        List<X509Certificate> certificates = new ArrayList<>(blocks.size());
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Block block : blocks) {
                if (!block.label().equals("CERTIFICATE")) {
                    return null;
                }
                X509Certificate certificate = (X509Certificate) factory.generateCertificate(
                        new ByteArrayInputStream(block.der()));
                // Nothing after the certificate, nothing the JDK read differently.
                if (!Arrays.equals(certificate.getEncoded(), block.der())) {
                    return null;
                }
                certificates.add(certificate);
            }
        } catch (GeneralSecurityException | RuntimeException e) {
            return null;
        }
        return certificates;
    }

    /** The key of a file holding one unencrypted PKCS#8 EC or RSA key and nothing else, or null. */
    static PrivateKey privateKey(String pem) {
        List<Block> blocks = blocks(pem);
        if (blocks == null || blocks.size() != 1 || !blocks.get(0).label().equals("PRIVATE KEY")) {
            return null;
        }
        byte[] der = blocks.get(0).der();
        byte[] oid = algorithmOid(der);
        String algorithm = Arrays.equals(oid, EC_OID) ? "EC" : Arrays.equals(oid, RSA_OID) ? "RSA" : null;
        if (algorithm == null) {
            return null;
        }
        try {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The blocks of a file that is blocks only (blank lines between them are fine), each
     * {@code -----BEGIN L-----}, base64 lines without headers, {@code -----END L-----}; null for anything else.
     */
    private static List<Block> blocks(String pem) {
        List<Block> blocks = new ArrayList<>(2);
        String label = null;
        StringBuilder base64 = new StringBuilder();
        for (String raw : pem.split("\n", -1)) {
            String line = raw.endsWith("\r") ? raw.substring(0, raw.length() - 1) : raw;
            if (label == null) {
                if (line.isBlank()) {
                    continue;
                }
                if (!line.startsWith(BEGIN) || !line.endsWith(DASHES) || line.length() <= BEGIN.length()
                        + DASHES.length()) {
                    return null;
                }
                label = line.substring(BEGIN.length(), line.length() - DASHES.length());
                base64.setLength(0);
            } else if (line.startsWith(END)) {
                if (!line.equals(END + label + DASHES)) {
                    return null;
                }
                try {
                    blocks.add(new Block(label, Base64.getDecoder().decode(base64.toString())));
                } catch (IllegalArgumentException e) {
                    return null;
                }
                label = null;
            } else if (line.indexOf(':') >= 0 || line.startsWith(BEGIN)) {
                return null; // headers (Proc-Type: 4,ENCRYPTED) or a block inside a block
            } else {
                base64.append(line.strip());
            }
        }
        return label == null ? blocks : null;
    }

    /** The algorithm OID's content bytes of a PKCS#8 PrivateKeyInfo, or null when the DER does not start like one. */
    private static byte[] algorithmOid(byte[] der) {
        int i = contentStart(der, 0, 0x30); // PrivateKeyInfo SEQUENCE
        if (i < 0 || i + 3 > der.length || der[i] != 0x02 || der[i + 1] != 0x01 || der[i + 2] != 0x00) {
            return null; // version 0 (v1)
        }
        i = contentStart(der, i + 3, 0x30); // AlgorithmIdentifier SEQUENCE
        if (i < 0 || i + 2 > der.length || der[i] != 0x06) {
            return null;
        }
        int length = der[i + 1];
        if (length <= 0 || i + 2 + length > der.length) {
            return null;
        }
        return Arrays.copyOfRange(der, i + 2, i + 2 + length);
    }

    /** Where the content of the element at {@code at} with tag {@code tag} starts, or -1. */
    private static int contentStart(byte[] der, int at, int tag) {
        if (at + 2 > der.length || (der[at] & 0xff) != tag) {
            return -1;
        }
        int first = der[at + 1] & 0xff;
        if (first < 0x80) {
            return at + 2;
        }
        int octets = first & 0x7f;
        return octets >= 1 && octets <= 3 && at + 2 + octets <= der.length ? at + 2 + octets : -1;
    }

    /** Appends one block: BEGIN line, base64 in 64-character lines, END line, each ending in a newline. */
    static void encode(StringBuilder out, String label, byte[] der) {
        String base64 = Base64.getEncoder().encodeToString(der);
        out.append(BEGIN).append(label).append(DASHES).append('\n');
        for (int i = 0; i < base64.length(); i += 64) {
            out.append(base64, i, Math.min(base64.length(), i + 64)).append('\n');
        }
        out.append(END).append(label).append(DASHES).append('\n');
    }
}
