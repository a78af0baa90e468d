package io.tenantgateway.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QuantityTest {

    @Test
    void parsesKubernetesQuantities() {
        assertThat(Quantity.parse("1").orElseThrow().exactLong()).contains(1L);
        assertThat(Quantity.parse("3000").orElseThrow().exactLong()).contains(3000L);
        assertThat(Quantity.parse("2Gi").orElseThrow().exactLong()).contains(2L << 30);
        assertThat(Quantity.parse("1k").orElseThrow().exactLong()).contains(1000L);
        assertThat(Quantity.parse("1e3").orElseThrow().exactLong()).contains(1000L);
        assertThat(Quantity.parse("-5").orElseThrow().value()).isEqualTo(-5);
        assertThat(Quantity.parse(".5").orElseThrow().value()).isEqualTo(1);
    }

    @Test
    void valueRoundsUpAndExactLongNeedsAWholeNumber() {
        Quantity half = Quantity.parse("500m").orElseThrow();
        assertThat(half.value()).isEqualTo(1);
        assertThat(half.exactLong()).isEmpty();
        assertThat(Quantity.parse("50.5").orElseThrow().value()).isEqualTo(51);
        assertThat(Quantity.parse("9Ei").orElseThrow().value()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void rejectsWhatTheApiServerRejects() {
        assertThat(Quantity.parse("lots")).isEmpty();
        assertThat(Quantity.parse("1 Gi")).isEmpty();
        assertThat(Quantity.parse("1Xi")).isEmpty();
        assertThat(Quantity.parse("")).isEmpty();
        assertThat(Quantity.parse(null)).isEmpty();
    }
}
