package io.tenantgateway.tunnel.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class HeadersTest {
    @Test
    void serverCountNeedsExactlyOnePositiveValue() {
        assertThat(Headers.serverCount(List.of("3"))).isEqualTo(3);
        assertThatThrownBy(() -> Headers.serverCount(List.of()))
                .hasMessage("header servercount: missing (expected: exactly one value)");
        assertThatThrownBy(() -> Headers.serverCount(List.of("1", "2")))
                .hasMessage("header servercount: [1, 2] (expected: exactly one value)");
        assertThatThrownBy(() -> Headers.serverCount(List.of("three")))
                .hasMessage("header servercount: \"three\" (expected: a decimal count of server replicas)");
        assertThatThrownBy(() -> Headers.serverCount(List.of("0")))
                .hasMessage("header servercount: 0 (expected: >= 1)");
    }

    @Test
    void bearerTokens() {
        assertThat(Headers.bearer("abc")).isEqualTo("Bearer abc");
        assertThat(Headers.bearerToken("Bearer abc")).contains("abc");
        assertThat(Headers.bearerToken("bearer abc")).contains("abc");
        assertThat(Headers.bearerToken("Basic abc")).isEmpty();
        assertThat(Headers.bearerToken(null)).isEmpty();
    }

    @Test
    void flowControlOfferRoundTrips() {
        assertThat(FlowControlOffer.v1(2097152).format()).isEqualTo("v1;window=2097152");
        assertThat(FlowControlOffer.parse("v1;window=2097152")).contains(FlowControlOffer.v1(2097152));
        assertThat(FlowControlOffer.parse(" v1; window=65536 ")).contains(FlowControlOffer.v1(65536));
        assertThat(FlowControlOffer.parse("v2;window=65536")).isEmpty();
        assertThat(FlowControlOffer.parse("v1;window=0")).isEmpty();
        assertThat(FlowControlOffer.parse("garbage")).isEmpty();
        assertThat(FlowControlOffer.parse(null)).isEmpty();
    }

    @Test
    void receiveWindowGrantsInQuartersAndDetectsOverruns() {
        ReceiveWindow window = new ReceiveWindow(1000, 100);
        assertThat(window.onReceived(600)).isTrue();
        assertThat(window.onConsumed(200)).isZero(); // below a quarter: not worth a packet yet
        assertThat(window.onConsumed(100)).isEqualTo(300); // the peer may now have 1000 outstanding again
        assertThat(window.buffered()).isEqualTo(300);
        assertThat(window.onReceived(800)).isTrue(); // 1400 received = 1300 granted + 100 slack
        assertThat(window.onReceived(1)).isFalse();
    }
}
