package io.tenantgateway.certs;

import io.netty.util.NetUtil;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/** Subject alternative names: listing them and matching a host name or IP (RFC 6125 rules, one left wildcard). */
public final class SubjectNames {
    private static final int DNS = 2;
    private static final int IP = 7;

    private SubjectNames() {
    }

    /** SANs as {@code DNS:name} and {@code IP:addr} strings, in certificate order. */
    public static List<String> of(X509Certificate certificate) {
        List<String> names = new ArrayList<>();
        for (List<?> entry : entries(certificate)) {
            int type = (Integer) entry.get(0);
            if (type == DNS) {
                names.add("DNS:" + entry.get(1));
            } else if (type == IP) {
                names.add("IP:" + normalizeIp(String.valueOf(entry.get(1))));
            }
        }
        return names;
    }

    /** Whether the certificate's SANs cover {@code host} (an IP literal matches only IP SANs). */
    public static boolean matches(X509Certificate certificate, String host) {
        String candidate = stripBrackets(host);
        boolean isIp = NetUtil.isValidIpV4Address(candidate) || NetUtil.isValidIpV6Address(candidate);
        for (List<?> entry : entries(certificate)) {
            int type = (Integer) entry.get(0);
            String value = String.valueOf(entry.get(1));
            if (isIp && type == IP && Arrays.equals(NetUtil.createByteArrayFromIpAddressString(value),
                    NetUtil.createByteArrayFromIpAddressString(candidate))) {
                return true;
            }
            if (!isIp && type == DNS && dnsMatches(value, candidate)) {
                return true;
            }
        }
        return false;
    }

    static boolean dnsMatches(String pattern, String host) {
        String p = trimDot(pattern.toLowerCase(Locale.ROOT));
        String h = trimDot(host.toLowerCase(Locale.ROOT));
        if (!p.startsWith("*.")) {
            return p.equals(h);
        }
        int firstDot = h.indexOf('.');
        return firstDot > 0 && h.substring(firstDot + 1).equals(p.substring(2));
    }

    private static String trimDot(String name) {
        return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
    }

    private static String stripBrackets(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static String normalizeIp(String ip) {
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(ip);
        return bytes == null ? ip : NetUtil.bytesToIpAddress(bytes);
    }

    private static Collection<List<?>> entries(X509Certificate certificate) {
        try {
            Collection<List<?>> names = certificate.getSubjectAlternativeNames();
            return names == null ? List.of() : names;
        } catch (CertificateParsingException e) {
            throw new IllegalArgumentException("certificate " + certificate.getSubjectX500Principal().getName()
                    + ": unreadable subjectAltName extension: " + e.getMessage(), e);
        }
    }
}
