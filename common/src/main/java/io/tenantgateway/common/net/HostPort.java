package io.tenantgateway.common.net;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.util.regex.Pattern;

/**
 * An address as a flag gives it. The one parser of address flags: {@link #parse} reads an address to listen on
 * ({@code run --webhook-listen}, {@code webhook --listen}): {@code HOST:PORT}, {@code [v6]:PORT}, {@code :PORT} or a
 * bare {@code PORT} (the last two: all interfaces, {@value #ALL_INTERFACES}); {@link #parseRemote} one to connect to
 * ({@code probe --server}, {@code --target}): {@code HOST:PORT} or {@code [v6]:PORT}, both given.
 *
 * @param host the host name or IP literal, without brackets
 * @param port 0..65535 (0: any free port)
 */
public record HostPort(String host, int port) {
    /** The host of {@code :PORT} and {@code PORT}. */
    public static final String ALL_INTERFACES = "0.0.0.0";

    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,9}");
    private static final String EXPECTED = "HOST:PORT, [IPv6]:PORT, :PORT or PORT, e.g. 0.0.0.0:9443";
    private static final String EXPECTED_REMOTE = "HOST:PORT, e.g. 10.96.0.10:443 or [fd00::1]:443";

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

    /**
     * An address to connect to: a host (an IPv6 literal in brackets) and a port 1..65535, both required.
     *
     * @param flag the flag the text came from, for the message
     * @param text the flag's value
     * @throws ConfigException naming {@code flag} and quoting {@code text} when it is not such an address
     */
    public static HostPort parseRemote(String flag, String text) {
        requireNonNull(flag, "flag");
        String value = requireNonNull(text, flag).strip();
        String quoted = "'" + text + "'";
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new ConfigException(flag, quoted, EXPECTED_REMOTE);
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new ConfigException(flag, quoted + ": IPv6 literals need brackets", EXPECTED_REMOTE);
        }
        try {
            int port = Integer.parseInt(value.substring(colon + 1));
            if (host.isBlank() || port == 0) {
                throw new IllegalArgumentException("host and port: " + format(host, port)
                        + " (expected: a host and a port 1..65535)");
            }
            return new HostPort(host, port);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(flag, quoted, EXPECTED_REMOTE, e);
        }
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
