package io.tenantgateway.certs;

import io.tenantgateway.common.config.ConfigException;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Key types the CA issues. EC P-256 is the default: small, fast handshakes, accepted everywhere in Kubernetes. */
public enum KeyAlgorithm {
    EC_P256("ec-p256", "EC", "SHA256withECDSA"),
    RSA_2048("rsa-2048", "RSA", "SHA256withRSA"),
    RSA_4096("rsa-4096", "RSA", "SHA256withRSA");

    private final String cliName;
    private final String jcaName;
    private final String signatureAlgorithm;

    KeyAlgorithm(String cliName, String jcaName, String signatureAlgorithm) {
        this.cliName = cliName;
        this.jcaName = jcaName;
        this.signatureAlgorithm = signatureAlgorithm;
    }

    /**
     * Parses the CLI spelling ({@code ec-p256}, {@code rsa-2048}, {@code rsa-4096}).
     *
     * @throws ConfigException for any other spelling
     */
    public static KeyAlgorithm parse(String value) {
        String normalized = value.trim().toLowerCase(Locale.ROOT);
        for (KeyAlgorithm algorithm : values()) {
            if (algorithm.cliName.equals(normalized)) {
                return algorithm;
            }
        }
        throw ConfigException.of("key algorithm", value + " (expected one of: "
                + Arrays.stream(values()).map(KeyAlgorithm::cliName).collect(Collectors.joining(", ")) + ")");
    }

    public String cliName() {
        return cliName;
    }

    KeyPair generate(SecureRandom random) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance(jcaName);
            switch (this) {
                case EC_P256 -> generator.initialize(new ECGenParameterSpec("secp256r1"), random);
                case RSA_2048 -> generator.initialize(2048, random);
                case RSA_4096 -> generator.initialize(4096, random);
                default -> throw new IllegalStateException(name());
            }
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate a " + cliName + " key pair: " + e.getMessage(), e);
        }
    }

    /** The signature algorithm a key of this family signs certificates with. */
    static String signatureAlgorithmFor(PrivateKey key) {
        return switch (key.getAlgorithm()) {
            case "EC" -> EC_P256.signatureAlgorithm;
            case "RSA" -> RSA_2048.signatureAlgorithm;
            default -> throw new IllegalArgumentException("private key algorithm: " + key.getAlgorithm()
                    + " (expected: EC or RSA)");
        };
    }
}
