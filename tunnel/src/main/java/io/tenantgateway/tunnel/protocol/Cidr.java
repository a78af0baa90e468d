package io.tenantgateway.tunnel.protocol;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * An IPv4 or IPv6 network in CIDR notation, e.g. {@code 10.96.0.0/12} or {@code fd00::/8}. An IPv4-mapped network
 * ({@code ::ffff:10.0.0.0/104}) is the IPv4 network ({@code 10.0.0.0/8}), as mapped addresses are judged as IPv4.
 */
public record Cidr(InetAddress network, int prefixLength) {
    public Cidr {
        requireNonNull(network, "network");
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits) {
            throw new IllegalArgumentException("CIDR prefix length: " + prefixLength + " (expected: 0.." + bits + ")");
        }
    }

    /** Parses {@code address/prefix}; a bare address is a single-host network. */
    public static Cidr parse(String text) {
        requireNonNull(text, "text");
        int slash = text.indexOf('/');
        String addressText = slash < 0 ? text : text.substring(0, slash);
        InetAddress address = IpLiteral.parseOrNull(addressText.strip());
        if (address == null) {
            throw new IllegalArgumentException("CIDR: \"" + text + "\" (expected: an IP network such as 10.0.0.0/8"
                    + " or fd00::/8)");
        }
        // A mapped network came back as IPv4; its prefix was written against 128 bits.
        int offset = addressText.indexOf(':') >= 0 && address.getAddress().length == 4 ? 96 : 0;
        int bits = address.getAddress().length * 8 + offset;
        int prefix = bits;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(text.substring(slash + 1).strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("CIDR: \"" + text + "\" (expected: a prefix length 0.." + bits
                        + " after the slash)", e);
            }
            if (prefix < offset || prefix > bits) {
                throw new IllegalArgumentException("CIDR: \"" + text + "\" (expected: a prefix length " + offset
                        + ".." + bits + ")");
            }
        }
        return new Cidr(address, prefix - offset);
    }

    public boolean contains(InetAddress address) {
        byte[] net = network.getAddress();
        byte[] candidate = IpLiteral.canonical(address).getAddress();
        if (net.length != candidate.length) {
            return false;
        }
        int fullBytes = prefixLength / 8;
        if (!Arrays.equals(net, 0, fullBytes, candidate, 0, fullBytes)) {
            return false;
        }
        int remainingBits = prefixLength % 8;
        if (remainingBits == 0) {
            return true;
        }
        int mask = 0xff << (8 - remainingBits);
        return (net[fullBytes] & mask) == (candidate[fullBytes] & mask);
    }

    /** Whether the two networks share an address (same family, and one contains the other's network). */
    public boolean overlaps(Cidr other) {
        return contains(other.network) || other.contains(network);
    }

    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
