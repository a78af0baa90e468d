package io.tenantgateway.certs;

import java.security.cert.CertificateException;
import java.util.Locale;
import javax.net.ssl.SSLException;

/**
 * Turns a TLS handshake failure into one sentence a person can act on. Our own trust manager already throws
 * precise messages (expired, wrong CA, name mismatch); this also covers what the peer tells us through TLS alerts
 * and what the JDK reports itself.
 */
public final class TlsFailures {
    private TlsFailures() {
    }

    public static String describe(Throwable failure) {
        CertificateException ours = find(failure, CertificateException.class);
        if (ours != null && ours.getMessage() != null) {
            return ours.getMessage();
        }
        String all = messages(failure);
        String lower = all.toLowerCase(Locale.ROOT);
        if (lower.contains("empty client certificate chain") || lower.contains("certificate_required")
                || lower.contains("client presented no certificate")) {
            return "client certificate required but none was presented (configure a client certificate and key"
                    + " signed by the server's client CA)";
        }
        if (lower.contains("unknown_ca")) {
            return "the peer does not trust the CA that issued our certificate (alert unknown_ca)";
        }
        if (lower.contains("certificate_expired")) {
            return "the peer reports that our certificate has expired (alert certificate_expired)";
        }
        if (lower.contains("bad_certificate")) {
            return "the peer rejected our certificate (alert bad_certificate): wrong CA, wrong key usage or"
                    + " expired";
        }
        if (lower.contains("no appropriate protocol") || lower.contains("protocol_version")) {
            return "no TLS version in common (this side speaks " + TlsContexts.PROTOCOLS + ")";
        }
        if (lower.contains("handshake_failure") || lower.contains("no cipher suites in common")) {
            return "TLS handshake failure: no cipher suite or key type in common";
        }
        if (lower.contains("pkix path")) {
            return "certificate is not signed by a trusted CA (" + all + ")";
        }
        SSLException ssl = find(failure, SSLException.class);
        return ssl != null && ssl.getMessage() != null ? "TLS failure: " + ssl.getMessage() : all;
    }

    private static String messages(Throwable failure) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null) {
                if (text.length() > 0) {
                    text.append(": ");
                }
                text.append(t.getMessage());
            }
        }
        return text.length() == 0 ? failure.getClass().getSimpleName() : text.toString();
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
