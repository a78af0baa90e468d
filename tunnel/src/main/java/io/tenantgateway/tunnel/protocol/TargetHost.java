package io.tenantgateway.tunnel.protocol;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The host part of a DIAL_REQ address, classified once so that the policy and the dialer agree on what it is: a
 * strict IP literal, a host name (to resolve), or malformed (refused; never sent to DNS).
 */
public sealed interface TargetHost {
    /** The text as requested (brackets removed). */
    String text();

    /**
     * A strict literal; {@code address} is canonical (IPv4-mapped → IPv4). {@code zone} is the IPv6 zone id
     * ({@code eth0} in {@code fe80::1%eth0}) or {@code null}; it selects an interface, it is not part of the
     * address the policy judges.
     */
    record Literal(String text, InetAddress address, String zone) implements TargetHost {
        public Literal {
            requireNonNull(text, "text");
            requireNonNull(address, "address");
        }
    }

    /** A host name; {@link #normalized} is lower case without a trailing dot (for matching host patterns). */
    record Name(String text) implements TargetHost {
        public Name {
            requireNonNull(text, "text");
        }

        public String normalized() {
            String name = text.toLowerCase(Locale.ROOT);
            return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        }
    }

    /** Neither a strict literal nor a valid host name; {@code problem} says why (for logs). */
    record Malformed(String text, String problem) implements TargetHost {
        public Malformed {
            requireNonNull(text, "text");
            requireNonNull(problem, "problem");
        }
    }

    /** LDH labels (underscore tolerated, as in SRV-style names), 1..63 characters, optional trailing dot. */
    Pattern NAME = Pattern.compile("(?=.{1,254}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\\.)*"
            + "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\\.?");
    Pattern ZONE = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /** {@link #zoneIndex} of an all-digit zone id that does not fit an interface index. */
    int BAD_ZONE_INDEX = -2;

    /**
     * The interface index an all-digit zone id names ({@code 2} in {@code fe80::1%2}), {@code -1} for an interface
     * name, or {@link #BAD_ZONE_INDEX} for digits that do not fit a Java scope id ({@code 0..2147483647}; the JDK's
     * {@code Inet6Address} takes an {@code int}). Never throws: a hostile DIAL_REQ's zone must cost one dial only.
     */
    static int zoneIndex(String zone) {
        if (zone.isEmpty() || !zone.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        String digits = zone.replaceFirst("^0+(?=.)", "");
        if (digits.length() > 10) {
            return BAD_ZONE_INDEX;
        }
        long value = Long.parseLong(digits);
        return value > Integer.MAX_VALUE ? BAD_ZONE_INDEX : (int) value;
    }

    /** Classifies {@code host} (IPv6 in brackets or not). Pure: no DNS, no interface lookups. */
    static TargetHost parse(String host) {
        requireNonNull(host, "host");
        String text = host;
        boolean bracketed = text.startsWith("[") && text.endsWith("]") && text.length() >= 2;
        if (bracketed) {
            text = text.substring(1, text.length() - 1);
        }
        if (bracketed || text.indexOf(':') >= 0 || text.indexOf('%') >= 0) {
            String zone = null;
            String bare = text;
            int percent = text.indexOf('%');
            if (percent >= 0) {
                zone = text.substring(percent + 1);
                bare = text.substring(0, percent);
                if (!ZONE.matcher(zone).matches() || zoneIndex(zone) == BAD_ZONE_INDEX) {
                    return new Malformed(text, "IPv6 zone id \"" + zone + "\" (expected: an interface name or an"
                            + " index 0.." + Integer.MAX_VALUE + ")");
                }
            }
            byte[] bytes = bare.indexOf(':') >= 0 ? IpLiteral.parseIpv6(bare) : null;
            if (bytes == null) {
                return new Malformed(text, "not a strict IPv6 literal");
            }
            return new Literal(text, IpLiteral.toAddress(bytes), zone);
        }
        if (IpLiteral.looksNumeric(text)) {
            byte[] bytes = IpLiteral.parseIpv4(text);
            if (bytes == null) {
                return new Malformed(text, "numeric but not a strict IPv4 literal (expected: a.b.c.d, each 0..255"
                        + " without leading zeros)");
            }
            return new Literal(text, IpLiteral.toAddress(bytes), null);
        }
        if (!NAME.matcher(text).matches()) {
            return new Malformed(text, "not a valid host name");
        }
        return new Name(text);
    }
}
