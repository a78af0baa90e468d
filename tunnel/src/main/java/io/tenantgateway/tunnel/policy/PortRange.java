package io.tenantgateway.tunnel.policy;

import static java.util.Objects.requireNonNull;

/** A port or an inclusive port range, written {@code 443} or {@code 30000-32767}. */
public record PortRange(int first, int last) {
    public PortRange {
        if (first < 1 || first > 65535 || last < first || last > 65535) {
            throw new IllegalArgumentException("port range: " + first + "-" + last
                    + " (expected: 1 <= first <= last <= 65535)");
        }
    }

    public static PortRange parse(String text) {
        requireNonNull(text, "text");
        int dash = text.indexOf('-');
        try {
            if (dash < 0) {
                int port = Integer.parseInt(text.strip());
                return new PortRange(port, port);
            }
            return new PortRange(Integer.parseInt(text.substring(0, dash).strip()),
                    Integer.parseInt(text.substring(dash + 1).strip()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port range: \"" + text + "\" (expected: a port such as 443 or a range"
                    + " such as 30000-32767)", e);
        }
    }

    public boolean contains(int port) {
        return port >= first && port <= last;
    }

    @Override
    public String toString() {
        return first == last ? Integer.toString(first) : first + "-" + last;
    }
}
