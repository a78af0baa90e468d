package io.tenantgateway.common.net;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.util.regex.Pattern;

/**
 * An address to listen on, as a flag gives it: {@code HOST:PORT}, {@code [v6]:PORT}, {@code :PORT} or a bare
 * {@code PORT} (the last two: all interfaces, {@value #ALL_INTERFACES}). The one parser of listen flags
 * ({@code run --webhook-listen}, {@code webhook --listen}).
 *
 * @param host the host name or IP literal, without brackets
 * @param port 0..65535 (0: any free port)
 */
public record HostPort(String host, int port) {
    /** The host of {@code :PORT} and {@code PORT}. */
    public static final String ALL_INTERFACES = "0.0.0.0";

    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,9}");
    private static final String EXPECTED = "HOST:PORT, [IPv6]:PORT, :PORT or PORT, e.g. 0.0.0.0:9443";

    public HostPort {
        requireNonNull(host, "host");
        if (host.isEmpty()) {
            throw new IllegalArgumentException("host: empty (expected: a host name or IP)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
        }
    }

    /**
     * @param flag the flag the text came from, for the message
     * @param text the flag's value
     * @throws ConfigException naming {@code flag} when {@code text} is not one of the forms or the port is out of
     *     range
     */
    public static HostPort parse(String flag, String text) {
        requireNonNull(flag, "flag");
        String value = text == null ? "" : text.strip();
        int colon = value.lastIndexOf(':');
        String host = colon < 0 ? "" : value.substring(0, colon);
        String port = value.substring(colon + 1);
        if (host.startsWith("[") && host.endsWith("]") && host.length() > 2) {
            host = host.substring(1, host.length() - 1);
            if (host.contains("[") || host.contains("]")) {
                throw new ConfigException(flag, text, EXPECTED);
            }
        } else if (host.contains(":") || host.contains("[") || host.contains("]")) {
            // An IPv6 literal needs its brackets: in fd00::1:9443 the port is a guess.
            throw new ConfigException(flag, text, EXPECTED);
        }
        if (!DIGITS.matcher(port).matches()) {
            throw new ConfigException(flag, text, EXPECTED);
        }
        int number = Integer.parseInt(port);
        if (number > 65535) {
            throw new ConfigException(flag, "port " + number, "0..65535");
        }
        return new HostPort(host.isEmpty() ? ALL_INTERFACES : host, number);
    }

    /** {@code host:port}, {@code [v6]:port} for an IPv6 literal. */
    public static String format(String host, int port) {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** {@link #format(String, int)}: the form {@link #parse} reads back. */
    @Override
    public String toString() {
        return format(host, port);
    }
}
