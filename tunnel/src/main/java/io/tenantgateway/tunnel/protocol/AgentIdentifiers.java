package io.tenantgateway.tunnel.protocol;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The {@code agentidentifiers} metadata: a URL query such as {@code host=node-1&ipv4=10.0.0.5&default-route=true}.
 * The server's {@code destHost} and {@code defaultRoute} strategies match dials against it.
 */
public record AgentIdentifiers(List<String> hosts, List<String> ipv4, List<String> ipv6, List<String> cidrs,
        boolean defaultRoute) {
    public static final Set<String> KEYS = Set.of("host", "ipv4", "ipv6", "cidr", "default-route");
    public static final AgentIdentifiers NONE = new AgentIdentifiers(List.of(), List.of(), List.of(), List.of(),
            false);

    public AgentIdentifiers {
        hosts = List.copyOf(hosts);
        ipv4 = List.copyOf(ipv4);
        ipv6 = List.copyOf(ipv6);
        cidrs = List.copyOf(cidrs);
        for (String value : ipv4) {
            if (!IpLiteral.isIpv4(value)) {
                throw new ConfigException("--agent-identifiers", "ipv4=" + value, "an IPv4 address");
            }
        }
        for (String value : ipv6) {
            if (!IpLiteral.isIpv6(value)) {
                throw new ConfigException("--agent-identifiers", "ipv6=" + value, "an IPv6 address");
            }
        }
        for (String value : cidrs) {
            try {
                Cidr.parse(value);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("--agent-identifiers", "cidr=" + value,
                        "an IP network such as 10.0.0.0/8", e);
            }
        }
    }

    /**
     * Parses the flag / metadata value. Unknown keys are rejected (upstream validates the flag the same way).
     *
     * @throws ConfigException naming the offending pair
     */
    public static AgentIdentifiers parse(String query) {
        requireNonNull(query, "query");
        List<String> hosts = new ArrayList<>();
        List<String> ipv4 = new ArrayList<>();
        List<String> ipv6 = new ArrayList<>();
        List<String> cidrs = new ArrayList<>();
        boolean defaultRoute = false;
        if (query.isBlank()) {
            return NONE;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            switch (key) {
                case "host" -> hosts.add(value);
                case "ipv4" -> ipv4.add(value);
                case "ipv6" -> ipv6.add(value);
                case "cidr" -> cidrs.add(value);
                case "default-route" -> {
                    String lower = value.toLowerCase(Locale.ROOT);
                    if (!lower.equals("true") && !lower.equals("false")) {
                        throw new ConfigException("--agent-identifiers", "default-route=" + value,
                                "true or false");
                    }
                    defaultRoute = defaultRoute || lower.equals("true");
                }
                default -> throw new ConfigException("--agent-identifiers",
                        "unknown key \"" + key + "\" in \"" + query + "\"",
                        "one of host, ipv4, ipv6, cidr, default-route");
            }
        }
        return new AgentIdentifiers(hosts, ipv4, ipv6, cidrs, defaultRoute);
    }

    /** The metadata value, keys in the order Go's {@code url.Values.Encode} uses (sorted). */
    public String encode() {
        StringJoiner joiner = new StringJoiner("&");
        cidrs.forEach(value -> joiner.add("cidr=" + encode(value)));
        if (defaultRoute) {
            joiner.add("default-route=true");
        }
        hosts.forEach(value -> joiner.add("host=" + encode(value)));
        ipv4.forEach(value -> joiner.add("ipv4=" + encode(value)));
        ipv6.forEach(value -> joiner.add("ipv6=" + encode(value)));
        return joiner.toString();
    }

    /** Whether a dial host (name or literal, without port) names this agent (the server's destHost strategy). */
    public boolean matchesHost(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (hosts.stream().anyMatch(h -> h.equalsIgnoreCase(bare))) {
            return true;
        }
        var address = IpLiteral.parseOrNull(bare);
        if (address == null) {
            return false;
        }
        return ipv4.stream().anyMatch(v -> address.equals(IpLiteral.parseOrNull(v)))
                || ipv6.stream().anyMatch(v -> address.equals(IpLiteral.parseOrNull(v)));
    }

    private static String decode(String text) {
        try {
            return URLDecoder.decode(text, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("--agent-identifiers", "\"" + text + "\"", "URL query encoding", e);
        }
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
