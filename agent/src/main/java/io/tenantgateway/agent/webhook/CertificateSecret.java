package io.tenantgateway.agent.webhook;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Secret;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TrustBundle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a self-managed webhook Secret holds, and its wire form: {@code tls.crt} (the serving certificate),
 * {@code tls.key} (its key), {@code ca.crt} (the published CAs, the signing one first: the webhook configuration's
 * {@code caBundle}) and {@code ca.key} (the signing CA's key, so that whichever agent renews next can sign). Keys are
 * PKCS#8 PEM. Immutable; never printed with its keys.
 *
 * @param serving the serving certificate and key, or {@code null} when the Secret holds none usable
 * @param bundle the published CAs, signing CA first when there is one; may be empty
 * @param signingCa the CA certificate of {@code bundle} that {@code ca.key} belongs to, with that key, or {@code null}
 * @param problems what was unusable, one sentence each (empty when everything parsed)
 */
record CertificateSecret(CertBundle serving, List<X509Certificate> bundle, CertBundle signingCa,
        List<String> problems) {
    static final String TLS_CRT = "tls.crt";
    static final String TLS_KEY = "tls.key";
    static final String CA_CRT = "ca.crt";
    static final String CA_KEY = "ca.key";

    CertificateSecret {
        bundle = List.copyOf(requireNonNull(bundle, "bundle"));
        problems = List.copyOf(requireNonNull(problems, "problems"));
    }

    /** Content the agent made: everything usable. */
    static CertificateSecret of(CertBundle serving, List<X509Certificate> bundle, CertBundle signingCa) {
        return new CertificateSecret(requireNonNull(serving, "serving"), bundle, requireNonNull(signingCa,
                "signingCa"), List.of());
    }

    /** Reads what is usable from {@code secret}; what is not is named in {@link #problems()}. */
    static CertificateSecret read(Secret secret) {
        String where = "Secret " + secret.getMetadata().getNamespace() + "/" + secret.getMetadata().getName();
        Map<String, String> data = secret.getData() == null ? Map.of() : secret.getData();
        List<String> problems = new ArrayList<>();
        CertBundle serving = null;
        try {
            serving = new CertBundle(Pem.parseCertificates(text(data, TLS_CRT, where), source(where, TLS_CRT)),
                    Pem.parsePrivateKey(text(data, TLS_KEY, where), source(where, TLS_KEY)));
        } catch (IllegalArgumentException e) { // a CertificateFileException too
            problems.add(e.getMessage());
        }
        List<X509Certificate> bundle = new ArrayList<>();
        if (data.containsKey(CA_CRT)) {
            try {
                bundle.addAll(Pem.parseCertificates(text(data, CA_CRT, where), source(where, CA_CRT)));
            } catch (IllegalArgumentException e) { // a CertificateFileException too
                problems.add(e.getMessage());
            }
        } else {
            problems.add(where + ": no key " + CA_CRT);
        }
        CertBundle signingCa = null;
        if (data.containsKey(CA_KEY)) {
            try {
                PrivateKey key = Pem.parsePrivateKey(text(data, CA_KEY, where), source(where, CA_KEY));
                for (X509Certificate ca : bundle) {
                    signingCa = matching(ca, key);
                    if (signingCa != null) {
                        break;
                    }
                }
                if (signingCa == null) {
                    problems.add(where + ": " + CA_KEY + " belongs to no certificate of " + CA_CRT);
                } else if (!bundle.get(0).equals(signingCa.leaf())) {
                    bundle.remove(signingCa.leaf());
                    bundle.add(0, signingCa.leaf());
                }
            } catch (IllegalArgumentException e) { // a CertificateFileException too
                problems.add(e.getMessage());
            }
        } else {
            problems.add(where + ": no key " + CA_KEY + " (the CA's key, which the agents sign with)");
        }
        return new CertificateSecret(serving, bundle, signingCa, problems);
    }

    private static CertBundle matching(X509Certificate ca, PrivateKey key) {
        try {
            return new CertBundle(List.of(ca), key);
        } catch (IllegalArgumentException notThisOne) {
            return null;
        }
    }

    /** The Secret's {@code data}: base64 of each PEM. */
    Map<String, String> data() {
        if (serving == null || signingCa == null) {
            throw new IllegalStateException("incomplete certificate Secret content: " + problems);
        }
        Map<String, String> data = new LinkedHashMap<>();
        data.put(TLS_CRT, base64(serving.certificatePem()));
        data.put(TLS_KEY, base64(serving.privateKeyPem()));
        data.put(CA_CRT, base64(Pem.encodeCertificates(bundle)));
        data.put(CA_KEY, base64(signingCa.privateKeyPem()));
        return data;
    }

    /** The CA bundle to publish, or {@code null} when the Secret has none. */
    TrustBundle trust() {
        return bundle.isEmpty() ? null : new TrustBundle(bundle);
    }

    /** SHA-256 over what an agent serves and publishes ({@code tls.crt}, {@code tls.key}, {@code ca.crt}). */
    static String fingerprint(Secret secret) {
        Map<String, String> data = secret.getData() == null ? Map.of() : secret.getData();
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (String key : List.of(TLS_CRT, TLS_KEY, CA_CRT)) {
                String value = data.get(key);
                digest.update((value == null ? "" : value).getBytes(StandardCharsets.US_ASCII));
                digest.update((byte) 0);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    @Override
    public String toString() {
        // Never the keys.
        return "CertificateSecret[serving=" + (serving == null ? "none" : serving.leaf().getSubjectX500Principal()
                .getName()) + ", bundle=" + bundle.size() + ", signingCa=" + (signingCa == null ? "none"
                : signingCa.leaf().getSubjectX500Principal().getName()) + ", problems=" + problems + "]";
    }

    private static String text(Map<String, String> data, String key, String where) {
        String value = data.get(key);
        if (value == null) {
            throw new IllegalArgumentException(where + ": no key " + key);
        }
        try {
            return new String(Base64.getDecoder().decode(value), StandardCharsets.US_ASCII);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + key + " is not base64: " + e.getMessage(), e);
        }
    }

    private static Path source(String where, String key) {
        return Path.of("secret:" + where.substring("Secret ".length()), key);
    }

    private static String base64(String pem) {
        return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII));
    }
}
