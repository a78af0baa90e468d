package io.tenantgateway.tunnel.policy;

import static java.util.Objects.requireNonNull;

import java.util.Locale;

/**
 * A host name, matched case-insensitively; a leading {@code *.} matches any name below that domain
 * ({@code *.svc.cluster.local} matches {@code a.b.svc.cluster.local}, not {@code svc.cluster.local}).
 */
public record HostPattern(String pattern) {
    public HostPattern {
        requireNonNull(pattern, "pattern");
        pattern = pattern.strip().toLowerCase(Locale.ROOT);
        if (pattern.endsWith(".")) {
            pattern = pattern.substring(0, pattern.length() - 1);
        }
        String rest = pattern.startsWith("*.") ? pattern.substring(2) : pattern;
        if (rest.isEmpty() || rest.contains("*") || rest.contains("/") || rest.contains(":")) {
            throw new IllegalArgumentException("host pattern: \"" + pattern + "\" (expected: a host name, optionally"
                    + " starting with *.)");
        }
    }

    public boolean matches(String host) {
        String name = host.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (pattern.startsWith("*.")) {
            return name.endsWith(pattern.substring(1));
        }
        return name.equals(pattern);
    }

    @Override
    public String toString() {
        return pattern;
    }
}
