package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JsonValueTest {

    @Test
    void readsNestedValuesAndKeepsDuplicateMembersInOrder() {
        JsonValue v = JsonValue.parse(" [ {\"a\":1,\"a\":\"x\\u00e9\\n\",\"b\":{\"c\":[true,false,null]}} , -0.5e3 ] ");

        assertThat(v.isArray()).isTrue();
        JsonValue object = v.elements().get(0);
        assertThat(object.members()).extracting(java.util.Map.Entry::getKey).containsExactly("a", "a", "b");
        assertThat(object.members().get(0).getValue().intValue()).isEqualTo(1);
        assertThat(object.members().get(1).getValue().stringValue()).isEqualTo("xé\n");
        assertThat(v.elements().get(1).isIntegralNumber()).isFalse();
        assertThat(v.elements().get(1)).hasToString("-0.5e3");
    }

    @Test
    void intsAreIntegralAndInRange() {
        assertThat(JsonValue.parse("2147483647").isInt()).isTrue();
        assertThat(JsonValue.parse("2147483648").isInt()).isFalse();
        assertThat(JsonValue.parse("-2147483648").isInt()).isTrue();
        assertThat(JsonValue.parse("1.0").isInt()).isFalse();
        assertThat(JsonValue.parse("1e2").isInt()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "[", "[1,]", "{\"a\"}", "{a:1}", "[1] x", "01", "\"\u0001\"", "\"\\x\"", "tru",
            "[1 2]", "-", "1.", "\"abc"})
    void rejectsWhatGoRejects(String json) {
        assertThatThrownBy(() -> JsonValue.parse(json)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(expected: ");
    }

    @Test
    void refusesHostileNesting() {
        assertThatThrownBy(() -> JsonValue.parse("[".repeat(100_000)))
                .hasMessageContaining("levels of nesting");
    }
}
