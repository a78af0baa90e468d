package io.tenantgateway.tunnel.protocol;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Strict IP address literals, parsed without ever touching DNS or the network.
 *
 * <p>IPv4 is exactly four dotted decimal parts, each 0..255 without leading zeros (Go's {@code net.ParseIP} since
 * 1.17): {@code 127.000.000.001}, {@code 0127.0.0.1}, {@code 0x7f.0.0.1}, {@code 127.1} and {@code 2130706433} are
 * not literals. IPv6 is RFC 4291 text: one to four hex digits a group (any case), at most one {@code ::}, an optional
 * strict dotted IPv4 tail; brackets are allowed around it. IPv4-mapped addresses ({@code ::ffff:a.b.c.d}) come back
 * as their {@link Inet4Address}, so they are judged against IPv4 networks.
 *
 * <p>Pure Java on purpose: the policy packages must not import Netty, and Netty's {@code NetUtil} is laxer than this
 * (it accepts leading zeros and empty zone ids, and turns IPv4-compatible {@code ::a.b.c.d} into a mapped address);
 * {@code IpLiteralTest} checks that every literal accepted here means the same bytes to {@code NetUtil}.
 */
public final class IpLiteral {
    private IpLiteral() {
    }

    /** The address for a strict IPv4 or IPv6 literal (brackets allowed, no zone id), or {@code null}. */
    public static InetAddress parseOrNull(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        if (text.startsWith("[") && text.endsWith("]")) {
            byte[] v6 = parseIpv6(text.substring(1, text.length() - 1));
            return v6 == null ? null : toAddress(v6);
        }
        byte[] bytes = text.indexOf(':') >= 0 ? parseIpv6(text) : parseIpv4(text);
        return bytes == null ? null : toAddress(bytes);
    }

    public static boolean isIpv4(String text) {
        return parseOrNull(text) instanceof Inet4Address;
    }

    public static boolean isIpv6(String text) {
        return parseOrNull(text) instanceof Inet6Address;
    }

    /**
     * Whether {@code host} would be taken for an IPv4 number by a lenient parser (inet_aton, browsers): its last
     * dot-separated label (a trailing dot ignored) is all decimal digits or {@code 0x}-hex. No top-level domain is
     * numeric, so such a string is a literal or malformed, never a name to look up.
     */
    public static boolean looksNumeric(String host) {
        String value = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        String last = value.substring(value.lastIndexOf('.') + 1);
        if (last.isEmpty()) {
            return false;
        }
        if (last.length() > 1 && (last.startsWith("0x") || last.startsWith("0X"))) {
            return last.substring(2).chars().allMatch(c -> Character.digit(c, 16) >= 0);
        }
        return last.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** Four bytes for a strict dotted-decimal IPv4 literal, or {@code null}. */
    static byte[] parseIpv4(String value) {
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

    /** Sixteen bytes for a strict IPv6 literal (no brackets, no zone), or {@code null}. */
    static byte[] parseIpv6(String value) {
        if (value.length() < 2 || value.length() > 45) {
            return null;
        }
        byte[] tail = null;
        String groupsText = value;
        int lastColon = value.lastIndexOf(':');
        if (lastColon < 1) {
            return null;
        }
        if (value.indexOf('.', lastColon) >= 0) {
            tail = parseIpv4(value.substring(lastColon + 1));
            if (tail == null) {
                return null;
            }
            // Keep the colon(s) before the tail: "::1.2.3.4" -> "::", "::ffff:1.2.3.4" -> "::ffff:".
            groupsText = value.substring(0, lastColon + 1);
            if (!groupsText.endsWith("::")) {
                groupsText = groupsText.substring(0, groupsText.length() - 1);
            }
        }
        int maxGroups = tail == null ? 8 : 6;
        int doubleColon = groupsText.indexOf("::");
        if (doubleColon >= 0 && groupsText.indexOf("::", doubleColon + 1) >= 0) {
            return null;
        }
        int[] head;
        int[] rest;
        if (doubleColon < 0) {
            head = groups(groupsText);
            rest = new int[0];
            if (head == null || head.length != maxGroups) {
                return null;
            }
        } else {
            head = groups(groupsText.substring(0, doubleColon));
            rest = groups(groupsText.substring(doubleColon + 2));
            // "::" stands for at least one group of zeros.
            if (head == null || rest == null || head.length + rest.length > maxGroups - 1) {
                return null;
            }
        }
        byte[] bytes = new byte[16];
        for (int i = 0; i < head.length; i++) {
            bytes[2 * i] = (byte) (head[i] >> 8);
            bytes[2 * i + 1] = (byte) head[i];
        }
        int end = tail == null ? 16 : 12;
        for (int i = 0; i < rest.length; i++) {
            int at = end - 2 * (rest.length - i);
            bytes[at] = (byte) (rest[i] >> 8);
            bytes[at + 1] = (byte) rest[i];
        }
        if (tail != null) {
            System.arraycopy(tail, 0, bytes, 12, 4);
        }
        return bytes;
    }

    /** Colon-separated 1..4-digit hex groups; "" is no groups; {@code null} when malformed. */
    private static int[] groups(String text) {
        if (text.isEmpty()) {
            return new int[0];
        }
        String[] parts = text.split(":", -1);
        int[] values = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            if (part.isEmpty() || part.length() > 4) {
                return null;
            }
            int value = 0;
            for (int j = 0; j < part.length(); j++) {
                int digit = Character.digit(part.charAt(j), 16);
                if (digit < 0) {
                    return null;
                }
                value = value * 16 + digit;
            }
            values[i] = value;
        }
        return values;
    }

    /** The address for raw bytes; IPv4-mapped IPv6 becomes the IPv4 address. */
    static InetAddress toAddress(byte[] bytes) {
        try {
            return canonical(InetAddress.getByAddress(bytes));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are always an address", e);
        }
    }

    /**
     * {@code address} as the kernel will treat it: an IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}) is the IPv4
     * address (the JDK already does this for addresses it builds; this covers any other {@link Inet6Address}).
     */
    public static InetAddress canonical(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (bytes.length == 16 && isMapped(bytes)) {
            try {
                return InetAddress.getByAddress(new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]});
            } catch (UnknownHostException e) {
                throw new IllegalStateException("4 bytes are always an address", e);
            }
        }
        return address;
    }

    /**
     * The IPv4 address embedded in an IPv4-compatible ({@code ::a.b.c.d}, deprecated) or NAT64 well-known-prefix
     * ({@code 64:ff9b::a.b.c.d}) IPv6 address, or {@code null}. ({@code ::} and {@code ::1} are not IPv4-compatible.)
     */
    public static Inet4Address embeddedIpv4(InetAddress address) {
        byte[] b = address.getAddress();
        if (b.length != 16) {
            return null;
        }
        boolean compatible = allZero(b, 0, 12) && !(allZero(b, 12, 15) && (b[15] == 0 || b[15] == 1));
        boolean nat64 = b[0] == 0 && b[1] == 0x64 && b[2] == (byte) 0xff && b[3] == (byte) 0x9b && allZero(b, 4, 12);
        if (!compatible && !nat64) {
            return null;
        }
        try {
            return (Inet4Address) InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 bytes are always an address", e);
        }
    }

    /** {@code 0.0.0.0} or {@code ::} (after {@link #canonical}, {@code ::ffff:0.0.0.0} is {@code 0.0.0.0}). */
    public static boolean isUnspecified(InetAddress address) {
        return canonical(address).isAnyLocalAddress();
    }

    private static boolean isMapped(byte[] b) {
        return allZero(b, 0, 10) && b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    }

    private static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
