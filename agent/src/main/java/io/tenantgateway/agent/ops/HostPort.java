package io.tenantgateway.agent.ops;

import io.tenantgateway.common.config.ConfigException;

import static java.util.Objects.requireNonNull;

/**
 * {@code host:port} as written on a command line ({@code [v6]:port} for IPv6 literals).
 *
 * @param host the host, without brackets
 * @param port 1..65535
 */
public record HostPort(String host, int port) {
    public HostPort {
        requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host: empty (expected: a host name or IP)");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
        }
    }

    /**
     * @param flag the flag, for the message
     * @throws ConfigException naming the flag and the value
     */
    public static HostPort parse(String flag, String value) {
        String text = requireNonNull(value, flag).strip();
        int colon = text.lastIndexOf(':');
        String expected = "HOST:PORT, e.g. 10.96.0.10:443 or [fd00::1]:443";
        if (colon <= 0 || colon == text.length() - 1) {
            throw new ConfigException(flag, "'" + value + "'", expected);
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new ConfigException(flag, "'" + value + "': IPv6 literals need brackets", expected);
        }
        try {
            return new HostPort(host, Integer.parseInt(text.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(flag, "'" + value + "'", expected, e);
        }
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
