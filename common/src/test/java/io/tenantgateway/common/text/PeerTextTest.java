package io.tenantgateway.common.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PeerTextTest {
    @Test
    void quoteEscapesWhatATerminalActsOnAsGoDoes() {
        assertThat(PeerText.quote("gpu-node-7")).isEqualTo("\"gpu-node-7\"");
        assertThat(PeerText.quote("a\nb\r\t\u0007\b\f\u000b")).isEqualTo("\"a\\nb\\r\\t\\a\\b\\f\\v\"");
        assertThat(PeerText.quote("\u001b[31mred\u001b]52;c;aGk=\u0007")).isEqualTo(
                "\"\\x1b[31mred\\x1b]52;c;aGk=\\a\"");
        assertThat(PeerText.quote("say \"hi\" \\ bye")).isEqualTo("\"say \\\"hi\\\" \\\\ bye\"");
        assertThat(PeerText.quote("\u007f\u009b\u0085")).isEqualTo("\"\\x7f\\u009b\\u0085\"");
        // Bidi override, zero-width space, BOM, line separator, no-break space, private use, a lone surrogate.
        assertThat(PeerText.quote("\u202e\u200b\ufeff\u2028\u00a0\ue000\ud800"))
                .isEqualTo("\"\\u202e\\u200b\\ufeff\\u2028\\u00a0\\ue000\\ud800\"");
        assertThat(PeerText.quote("\udb40\udc01")).isEqualTo("\"\\U000e0001\""); // a tag character: format
        assertThat(PeerText.quote("节点-α 😀")).isEqualTo("\"节点-α 😀\"");
        assertThat(PeerText.quote(null)).isEqualTo("<nil>");
    }

    @Test
    void boundAndEscapeKeepQuotesAndBackslashes() {
        assertThat(PeerText.bound("value \"a\\nb\" invalid\n")).isEqualTo("value \"a\\nb\" invalid\\n");
        assertThat(PeerText.escape("C:\\x \"y\"\u001b")).isEqualTo("C:\\x \"y\"\\x1b");
        String plain = "GPU-0";
        assertThat(PeerText.escape(plain)).isSameAs(plain);
        assertThat(PeerText.isPlain("a b")).isTrue();
        assertThat(PeerText.isPlain("a\tb")).isFalse();
    }

    @Test
    void aLongValueIsCutAtTheLimitAndSaysSo() {
        String value = "x".repeat(20480);
        String quoted = PeerText.quote(value, 1024);
        assertThat(quoted).isEqualTo("\"" + "x".repeat(1024) + "\"… (truncated, 20480 bytes, limit 1024)");
        String bounded = PeerText.bound(value);
        assertThat(bounded).startsWith("x".repeat(PeerText.TEXT_LIMIT) + "…")
                .endsWith(" (truncated, 20480 bytes, limit " + PeerText.TEXT_LIMIT + ")");
        assertThat(bounded.getBytes(StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(PeerText.TEXT_LIMIT + 64);
        assertThat(PeerText.quote("y".repeat(PeerText.VALUE_LIMIT))).doesNotContain("truncated");
        assertThat(PeerText.quote("y".repeat(PeerText.VALUE_LIMIT + 1))).contains("limit 256");
    }

    @Test
    void theLimitCountsEscapedUtf8BytesAndNeverSplitsAnEscape() {
        // Each ESC costs 4 bytes escaped: 10 bytes hold two of them, not two and a half.
        assertThat(PeerText.bound("\u001b\u001b\u001b", 10)).isEqualTo("\\x1b\\x1b… (truncated, 3 bytes, limit 10)");
        // '节' is 3 bytes: 7 bytes hold two.
        assertThat(PeerText.bound("节节节", 7)).isEqualTo("节节… (truncated, 9 bytes, limit 7)");
        // A pair is not split; a code point outside the BMP is 4 bytes.
        assertThat(PeerText.bound("😀😀", 6)).isEqualTo("😀… (truncated, 8 bytes, limit 6)");
        assertThat(PeerText.utf8Length("a节😀\ud800")).isEqualTo(1 + 3 + 4 + 3);
    }

    @Test
    void truncateCutsWithoutEscaping() {
        String fits = "a\nb";
        assertThat(PeerText.truncate(fits, 10)).isSameAs(fits);
        assertThat(PeerText.truncate("a\n" + "b".repeat(100), 10))
                .isEqualTo("a\n" + "b".repeat(8) + "… (truncated, 102 bytes, limit 10)");
    }

    @Test
    void appendQuotedIsWholeGoQuoting() {
        StringBuilder out = new StringBuilder("msg=");
        String long_ = "z".repeat(5000) + "\n";
        PeerText.appendQuoted(out, long_);
        assertThat(out.toString()).isEqualTo("msg=\"" + "z".repeat(5000) + "\\n\"");
        StringBuilder escaped = new StringBuilder();
        PeerText.appendEscaped(escaped, "\tline\r");
        assertThat(escaped.toString()).isEqualTo("\\tline\\r");
    }
}
