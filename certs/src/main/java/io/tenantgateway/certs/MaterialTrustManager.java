package io.tenantgateway.certs;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Verifies peers against the trust bundle of the current {@link TlsMaterial} snapshot, and — because the JDK leaves
 * host-name checks to an {@code X509ExtendedTrustManager} — checks the server's names itself when endpoint
 * identification is on. Every rejection says exactly what was wrong (expired, wrong CA, name mismatch, wrong key
 * usage) instead of a generic PKIX failure.
 */
final class MaterialTrustManager extends X509ExtendedTrustManager {
    private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final String ANY_USAGE = "2.5.29.37.0";

    private final TlsMaterial material;
    private final Clock clock;

    MaterialTrustManager(TlsMaterial material, Clock clock) {
        this.material = material;
        this.clock = clock;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        verify("client", chain, CLIENT_AUTH, null);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        verify("client", chain, CLIENT_AUTH, null);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        verify("client", chain, CLIENT_AUTH, null);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        verify("server", chain, SERVER_AUTH, hostToVerify(engine.getSSLParameters(), engine.getPeerHost()));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        String host = null;
        if (socket instanceof SSLSocket ssl && ssl.getHandshakeSession() != null) {
            host = hostToVerify(ssl.getSSLParameters(), ssl.getHandshakeSession().getPeerHost());
        }
        verify("server", chain, SERVER_AUTH, host);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        verify("server", chain, SERVER_AUTH, null);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        TrustBundle trust = material.current().trustOrNull();
        return trust == null ? new X509Certificate[0] : trust.certificates().toArray(X509Certificate[]::new);
    }

    private static String hostToVerify(SSLParameters parameters, String peerHost) {
        String algorithm = parameters.getEndpointIdentificationAlgorithm();
        return algorithm == null || algorithm.isEmpty() ? null : peerHost;
    }

    private void verify(String role, X509Certificate[] chain, String usage, String host) throws CertificateException {
        if (chain == null || chain.length == 0) {
            throw new CertificateException(role + " presented no certificate");
        }
        TrustBundle trust = material.current().trustOrNull();
        if (trust == null) {
            throw new CertificateException("no CA configured to verify the " + role + " certificate "
                    + TrustBundle.subject(chain[0]) + " (configure a CA file)");
        }
        VerificationResult result = trust.verify(Arrays.asList(chain), clock.instant());
        if (!result.valid()) {
            throw new CertificateException(role + " " + result.message());
        }
        X509Certificate leaf = chain[0];
        List<String> usages;
        try {
            usages = leaf.getExtendedKeyUsage();
        } catch (CertificateParsingException e) {
            throw new CertificateException(role + " certificate " + TrustBundle.subject(leaf)
                    + " has an unreadable extendedKeyUsage: " + e.getMessage(), e);
        }
        if (usages != null && !usages.contains(usage) && !usages.contains(ANY_USAGE)) {
            throw new CertificateException(role + " certificate " + TrustBundle.subject(leaf) + " is not valid for "
                    + (usage.equals(SERVER_AUTH) ? "serverAuth" : "clientAuth") + " (its extendedKeyUsage: "
                    + usages + ")");
        }
        if (host != null && !SubjectNames.matches(leaf, host)) {
            throw new CertificateException("server certificate " + TrustBundle.subject(leaf)
                    + " does not match the name '" + host + "' (its names: " + SubjectNames.of(leaf) + ")");
        }
    }
}
