package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Go's {@code encoding/json} syntax errors, word for word, and what Go accepts. */
class GoJsonSyntaxTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "not-json         | invalid character 'o' in literal null (expecting 'u')",
        "``               | unexpected end of JSON input",
        "`   `            | unexpected end of JSON input",
        "[1,2             | unexpected end of JSON input",
        "{\"a\"           | unexpected end of JSON input",
        "\"abc            | unexpected end of JSON input",
        "[1 2]            | invalid character '2' after array element",
        "{\"a\" 1}        | invalid character '1' after object key",
        "{\"a\":1 \"b\"}  | invalid character '\"' after object key:value pair",
        "{1}              | invalid character '1' looking for beginning of object key string",
        "{\"a\":1,}       | invalid character '}' looking for beginning of object key string",
        "[1,]             | invalid character ']' looking for beginning of value",
        "[] x             | invalid character 'x' after top-level value",
        "01               | invalid character '1' after top-level value",
        "\"a\\x\"         | invalid character 'x' in string escape code",
        "\"\\u12g4\"      | invalid character 'g' in \\u hexadecimal character escape",
        "-x               | invalid character 'x' in numeric literal",
        "1.x              | invalid character 'x' after decimal point in numeric literal",
        "1ex              | invalid character 'x' in exponent of numeric literal",
        "1e+]             | invalid character ']' in exponent of numeric literal",
        "trUe             | invalid character 'U' in literal true (expecting 'u')",
        "fals]            | invalid character ']' in literal false (expecting 'e')",
        "tru              | invalid character ' ' in literal true (expecting 'e')",
        "1.               | invalid character ' ' after decimal point in numeric literal",
        "-                | invalid character ' ' in numeric literal",
        "\"\\             | invalid character ' ' in string escape code",
        "'x'              | invalid character '\\'' looking for beginning of value",
        "é                | invalid character 'Ã' looking for beginning of value",
        "DCU-a,1:         | invalid character 'D' looking for beginning of value",
    })
    void reportsGosMessage(String input, String message) {
        assertThat(GoJsonSyntax.check(input)).as(input).contains(message);
    }

    @Test
    void controlCharactersAndUnprintableBytesAreEscapedAsGoQuotesThem() {
        assertThat(GoJsonSyntax.check("\"a\nb\"")).contains("invalid character '\\n' in string literal");
        assertThat(GoJsonSyntax.check("\u0001")).contains("invalid character '\\x01' looking for beginning of value");
        assertThat(GoJsonSyntax.check("\u00a0")).as("UTF-8 C2 A0: the first byte, U+00C2, is printable")
                .contains("invalid character 'Â' looking for beginning of value");
        assertThat(GoJsonSyntax.check("[\u0080]")).as("C2 80").contains(
                "invalid character 'Â' looking for beginning of value");
        assertThat(GoJson.quoteByte(0x80)).isEqualTo("'\\u0080'");
        assertThat(GoJson.quoteByte(0xa0)).isEqualTo("'\\u00a0'");
    }

    @Test
    void nestingBeyondGosLimitIsRefusedAtTheBracketThatPassesIt() {
        String deep = "[".repeat(GoJsonSyntax.MAX_DEPTH + 1);
        assertThat(GoJsonSyntax.check(deep)).contains("invalid character '[' exceeded max depth");
        assertThat(GoJsonSyntax.check("[".repeat(GoJsonSyntax.MAX_DEPTH))).contains("unexpected end of JSON input");
    }

    @Test
    void acceptsWhatGoAccepts() {
        for (String ok : new String[] {"null", " [ ] ", "{}", "[{\"a\":[1,-0.5e+3,true,false,null,\"\\u00e9\\n\"]}]",
            "0", "-1.25E-2", "\"é\"", "{\"a\":{},\"b\":[]}\n"}) {
            assertThat(GoJsonSyntax.check(ok)).as(ok).isEmpty();
        }
    }

    @Test
    void registerValuesReportGosTextThroughTheCodec() {
        assertThat(RegisterCodec.decode("hami.io/node-nvidia-register", "not-json", HamiRelease.V2_10, "n").error())
                .isEqualTo("invalid character 'o' in literal null (expecting 'u')");
        assertThat(RegisterCodec.decode("metax-tech.com/node-gpu-devices", "[{\"uuid\":\"a\"", HamiRelease.V2_9, "n")
                .error()).isEqualTo("unexpected end of JSON input");
    }
}
