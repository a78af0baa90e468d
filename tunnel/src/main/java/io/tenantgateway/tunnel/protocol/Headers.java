package io.tenantgateway.tunnel.protocol;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Metadata keys of {@code /AgentService/Connect} (lower case, as on the wire) and their value formats. */
public final class Headers {
    public static final String AGENT_ID = "agentid";
    public static final String AGENT_IDENTIFIERS = "agentidentifiers";
    public static final String AUTHORIZATION = "authorization";
    public static final String SERVER_ID = "serverid";
    public static final String SERVER_COUNT = "servercount";
    /** tenant-gateway extension offer/acceptance; see {@link FlowControlOffer}. */
    public static final String FLOW_CONTROL = "x-tenant-gateway-flow-control";

    private static final String BEARER = "Bearer ";

    private Headers() {
    }

    public static String bearer(String token) {
        return BEARER + token;
    }

    /** The token of a {@code Bearer} authorization value, or empty when the value has another scheme. */
    public static Optional<String> bearerToken(String authorization) {
        if (authorization == null || authorization.length() <= BEARER.length()
                || !authorization.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals("bearer ")) {
            return Optional.empty();
        }
        return Optional.of(authorization.substring(BEARER.length()).strip());
    }

    /**
     * The one value a header must carry.
     *
     * @throws IllegalArgumentException when the header is missing or repeated
     */
    public static String single(String key, List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException("header " + key + ": missing (expected: exactly one value)");
        }
        if (values.size() > 1) {
            throw new IllegalArgumentException("header " + key + ": " + values + " (expected: exactly one value)");
        }
        return values.get(0);
    }

    /** Parses {@code servercount}: exactly one positive decimal value. */
    public static int serverCount(List<String> values) {
        String value = single(SERVER_COUNT, values);
        try {
            int count = Integer.parseInt(value.strip());
            if (count < 1) {
                throw new IllegalArgumentException("header " + SERVER_COUNT + ": " + value + " (expected: >= 1)");
            }
            return count;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("header " + SERVER_COUNT + ": \"" + value
                    + "\" (expected: a decimal count of server replicas)", e);
        }
    }
}
