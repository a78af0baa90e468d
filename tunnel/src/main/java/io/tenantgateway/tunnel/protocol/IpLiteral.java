package io.tenantgateway.tunnel.protocol;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Parses IP address literals without ever touching DNS. ({@link InetAddress#getByName} falls back to a blocking
 * lookup for anything it does not recognise as a literal, which must never happen on an event loop.)
 */
public final class IpLiteral {
    private IpLiteral() {
    }

    /** The address for an IPv4 or IPv6 literal (brackets allowed around IPv6), or {@code null} for a host name. */
    public static InetAddress parseOrNull(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        String value = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        byte[] v4 = parseIpv4(value);
        if (v4 != null) {
            try {
                return InetAddress.getByAddress(v4);
            } catch (UnknownHostException e) {
                throw new IllegalStateException("four bytes are always a valid address", e);
            }
        }
        if (value.indexOf(':') < 0) {
            return null;
        }
        try {
            // Brackets make the JDK treat the text as an IPv6 literal and fail instead of resolving it.
            return InetAddress.getByName("[" + value + "]");
        } catch (UnknownHostException e) {
            return null;
        }
    }

    public static boolean isIpv4(String text) {
        return parseOrNull(text) instanceof Inet4Address;
    }

    public static boolean isIpv6(String text) {
        InetAddress address = parseOrNull(text);
        return address != null && !(address instanceof Inet4Address);
    }

    private static byte[] parseIpv4(String value) {
        String[] parts = value.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
            String part = parts[i];
            if (part.isEmpty() || part.length() > 3 || (part.length() > 1 && part.charAt(0) == '0')) {
                return null;
            }
            int octet = 0;
            for (int j = 0; j < part.length(); j++) {
                char c = part.charAt(j);
                if (c < '0' || c > '9') {
                    return null;
                }
                octet = octet * 10 + (c - '0');
            }
            if (octet > 255) {
                return null;
            }
            bytes[i] = (byte) octet;
        }
        return bytes;
    }
}
