package io.tenantgateway.certs;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * Presents the identity of the current {@link TlsMaterial} snapshot. The alias names the snapshot's generation, so
 * {@code getCertificateChain} and {@code getPrivateKey} of one handshake always return a matching pair even when a
 * reload lands between the calls.
 */
final class MaterialKeyManager extends X509ExtendedKeyManager {
    private static final String ALIAS_PREFIX = "tenant-gateway-";
    private static final int REMEMBERED_GENERATIONS = 4;

    private final TlsMaterial material;
    /** Recent generations by alias; tiny and bounded, guarded by itself. */
    private final Map<String, CertBundle> recent = new LinkedHashMap<>(8, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CertBundle> eldest) {
            return size() > REMEMBERED_GENERATIONS;
        }
    };

    MaterialKeyManager(TlsMaterial material) {
        this.material = material;
    }

    private String alias(String... keyTypes) {
        TlsMaterial.Snapshot snapshot = material.current();
        CertBundle identity = snapshot.identityOrNull();
        if (identity == null || !supports(identity, keyTypes)) {
            return null;
        }
        String alias = ALIAS_PREFIX + snapshot.generation();
        synchronized (recent) {
            recent.put(alias, identity);
        }
        return alias;
    }

    private static boolean supports(CertBundle identity, String... keyTypes) {
        String algorithm = identity.privateKey().getAlgorithm();
        for (String keyType : keyTypes) {
            // TLS 1.2 may ask for "EC_EC"/"EC_RSA" (key type, then the issuer's signing type).
            if (keyType != null && (keyType.equals(algorithm) || keyType.startsWith(algorithm + "_"))) {
                return true;
            }
        }
        return false;
    }

    private CertBundle bundle(String alias) {
        synchronized (recent) {
            return alias == null ? null : recent.get(alias);
        }
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return alias(keyType);
    }

    @Override
    public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
        return alias(keyTypes);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return alias(keyType);
    }

    @Override
    public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
        return alias(keyTypes);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        String alias = alias(keyType);
        return alias == null ? null : new String[] {alias};
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return getServerAliases(keyType, issuers);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        CertBundle bundle = bundle(alias);
        return bundle == null ? null : bundle.chain().toArray(X509Certificate[]::new);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        CertBundle bundle = bundle(alias);
        return bundle == null ? null : bundle.privateKey();
    }
}
