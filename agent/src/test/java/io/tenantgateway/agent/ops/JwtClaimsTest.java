package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class JwtClaimsTest {
    private static String jwt(String payload) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".c2ln";
    }

    @Test
    void readsAudienceListSubjectAndTimes() {
        JwtClaims claims = JwtClaims.decode(jwt("{\"aud\":[\"system:konnectivity-server\",\"other\"],"
                + "\"sub\":\"system:serviceaccount:kube-system:konnectivity-agent\",\"iss\":\"https://k8s\","
                + "\"exp\":1800000000,\"iat\":1799996400}") + "\n");

        assertThat(claims.audiences()).containsExactly("system:konnectivity-server", "other");
        assertThat(claims.hasKonnectivityAudience()).isTrue();
        assertThat(claims.subject()).hasValue("system:serviceaccount:kube-system:konnectivity-agent");
        assertThat(claims.issuer()).hasValue("https://k8s");
        assertThat(claims.expiresAt()).hasValue(Instant.ofEpochSecond(1_800_000_000L));
        assertThat(claims.issuedAt()).hasValue(Instant.ofEpochSecond(1_799_996_400L));
        assertThat(claims.expiredAt(Instant.ofEpochSecond(1_799_999_999L))).isFalse();
        assertThat(claims.expiredAt(Instant.ofEpochSecond(1_800_000_000L))).isTrue();
    }

    @Test
    void audienceMayBeAStringAndClaimsMayBeMissing() {
        JwtClaims claims = JwtClaims.decode(jwt("{\"aud\":\"https://kubernetes.default.svc\"}"));

        assertThat(claims.audiences()).containsExactly("https://kubernetes.default.svc");
        assertThat(claims.hasKonnectivityAudience()).isFalse();
        assertThat(claims.expiresAt()).isEmpty();
        assertThat(claims.expiredAt(Instant.now())).isFalse();
    }

    @Test
    void saysWhatIsWrongWithNonTokens() {
        assertThatThrownBy(() -> JwtClaims.decode("agent-token-for-tests"))
                .hasMessage("not a JWT: 1 dot-separated part(s) (expected: 3, header.payload.signature)");
        assertThatThrownBy(() -> JwtClaims.decode("a.!!!.c")).hasMessageStartingWith("not a JWT: payload is not"
                + " base64url");
        assertThatThrownBy(() -> JwtClaims.decode("a." + Base64.getUrlEncoder().withoutPadding()
                .encodeToString("nope".getBytes(StandardCharsets.UTF_8)) + ".c"))
                .hasMessageStartingWith("not a JWT: payload is not JSON");
    }
}
