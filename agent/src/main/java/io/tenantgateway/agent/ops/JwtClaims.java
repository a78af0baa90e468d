package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The claims of a JSON Web Token that matter for konnectivity token authentication, read WITHOUT verifying the
 * signature: doctor only shows what the token says (audience, expiry, subject) so that a person can compare it with
 * what the server expects. The server's TokenReview is what decides.
 *
 * @param audiences {@code aud} (a string or a list in the token; always a list here)
 * @param subject {@code sub}, e.g. {@code system:serviceaccount:kube-system:konnectivity-agent}
 * @param issuer {@code iss}
 * @param expiresAt {@code exp}
 * @param issuedAt {@code iat}
 */
public record JwtClaims(List<String> audiences, Optional<String> subject, Optional<String> issuer,
        Optional<Instant> expiresAt, Optional<Instant> issuedAt) {
    /** The audience Kamaji's konnectivity-server accepts ({@code --authentication-audience}). */
    public static final String KONNECTIVITY_AUDIENCE = "system:konnectivity-server";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    public JwtClaims {
        audiences = List.copyOf(audiences);
        requireNonNull(subject, "subject");
        requireNonNull(issuer, "issuer");
        requireNonNull(expiresAt, "expiresAt");
        requireNonNull(issuedAt, "issuedAt");
    }

    /**
     * Decodes the payload of a compact JWS ({@code header.payload.signature}).
     *
     * @throws IllegalArgumentException when the text is not a JWT; the message says what was found
     */
    public static JwtClaims decode(String token) {
        String text = requireNonNull(token, "token").strip();
        String[] parts = text.split("\\.", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("not a JWT: " + parts.length + " dot-separated part(s) (expected: 3,"
                    + " header.payload.signature)");
        }
        JsonNode payload;
        try {
            byte[] json = Base64.getUrlDecoder().decode(parts[1]);
            payload = JSON.readTree(new String(json, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a JWT: payload is not base64url (" + e.getMessage() + ")", e);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not a JWT: payload is not JSON (" + e.getOriginalMessage() + ")", e);
        }
        if (payload == null || !payload.isObject()) {
            throw new IllegalArgumentException("not a JWT: payload is not a JSON object");
        }
        List<String> audiences = new ArrayList<>();
        JsonNode aud = payload.get("aud");
        if (aud != null && aud.isArray()) {
            aud.forEach(value -> audiences.add(value.asString()));
        } else if (aud != null && aud.isString()) {
            audiences.add(aud.asString());
        }
        return new JwtClaims(audiences, text(payload, "sub"), text(payload, "iss"), time(payload, "exp"),
                time(payload, "iat"));
    }

    private static Optional<String> text(JsonNode payload, String claim) {
        JsonNode value = payload.get(claim);
        return value != null && value.isString() ? Optional.of(value.asString()) : Optional.empty();
    }

    private static Optional<Instant> time(JsonNode payload, String claim) {
        JsonNode value = payload.get(claim);
        return value != null && value.isNumber() ? Optional.of(Instant.ofEpochSecond(value.asLong()))
                : Optional.empty();
    }

    /** Whether the token is for konnectivity-server ({@value #KONNECTIVITY_AUDIENCE}). */
    public boolean hasKonnectivityAudience() {
        return audiences.contains(KONNECTIVITY_AUDIENCE);
    }

    public boolean expiredAt(Instant now) {
        return expiresAt.map(exp -> !now.isBefore(exp)).orElse(false);
    }
}
