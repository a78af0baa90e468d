package io.tenantgateway.tunnel.protocol;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The value of the {@value Headers#FLOW_CONTROL} header: {@code v1;window=<bytes>}.
 *
 * <p>An agent sends it on Connect; a tenant-gateway server echoes its own offer in the response headers. Only
 * when both are present does the stream use TG_CREDIT packets, so upstream servers (which ignore unknown metadata
 * and never answer it) keep seeing the plain protocol. {@code window} is how many DATA payload bytes the sender
 * of the header accepts per tunnel before it grants more credit.
 */
public record FlowControlOffer(int version, long window) {
    public static final int VERSION = 1;
    private static final Pattern FORMAT = Pattern.compile("v(\\d{1,3});\\s*window=(\\d{1,12})");

    public FlowControlOffer {
        if (version < 1) {
            throw new IllegalArgumentException("flow-control version: " + version + " (expected: >= 1)");
        }
        if (window < 1) {
            throw new IllegalArgumentException("flow-control window: " + window + " (expected: > 0)");
        }
    }

    public static FlowControlOffer v1(long window) {
        return new FlowControlOffer(VERSION, window);
    }

    public String format() {
        return "v" + version + ";window=" + window;
    }

    /** Parses a header value; empty when it is absent, malformed or of a version we do not speak. */
    public static Optional<FlowControlOffer> parse(String value) {
        if (value == null) {
            return Optional.empty();
        }
        Matcher matcher = FORMAT.matcher(value.strip());
        if (!matcher.matches() || Integer.parseInt(matcher.group(1)) != VERSION) {
            return Optional.empty();
        }
        long window = Long.parseLong(matcher.group(2));
        return window < 1 ? Optional.empty() : Optional.of(v1(window));
    }
}
