package io.tenantgateway.certs;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * An identity: a certificate chain (leaf first) and the leaf's private key. Immutable; the constructor refuses a
 * key that does not belong to the leaf, so a bundle that exists is always usable for a TLS handshake.
 */
public record CertBundle(List<X509Certificate> chain, PrivateKey privateKey) {

    public CertBundle {
        requireNonNull(chain, "chain");
        requireNonNull(privateKey, "privateKey");
        chain = List.copyOf(chain);
        if (chain.isEmpty()) {
            throw new IllegalArgumentException("certificate chain: empty (expected: at least the leaf certificate)");
        }
        if (!keyMatches(chain.get(0), privateKey)) {
            throw new IllegalArgumentException("private key (" + privateKey.getAlgorithm()
                    + ") does not match certificate " + chain.get(0).getSubjectX500Principal().getName()
                    + " (expected: the key the certificate was issued for)");
        }
    }

    public X509Certificate leaf() {
        return chain.get(0);
    }

    /** PEM of the whole chain, leaf first. */
    public String certificatePem() {
        return Pem.encodeCertificates(chain);
    }

    /** PEM of the private key, PKCS#8, unencrypted. */
    public String privateKeyPem() {
        return Pem.encodePrivateKey(privateKey);
    }

    @Override
    public String toString() {
        // Never print the key.
        return "CertBundle[" + leaf().getSubjectX500Principal().getName() + ", chain=" + chain.size() + "]";
    }

    /**
     * Proves possession: signs a nonce with the key and verifies it with the certificate's public key. This works
     * for every key type without comparing algorithm-specific parameters.
     */
    static boolean keyMatches(X509Certificate certificate, PrivateKey key) {
        if (!certificate.getPublicKey().getAlgorithm().equals(key.getAlgorithm())) {
            return false;
        }
        try {
            String algorithm = KeyAlgorithm.signatureAlgorithmFor(key);
            byte[] nonce = "tenant-gateway key check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(nonce);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(nonce);
            return verifier.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
