package io.tenantgateway.agent.logging;

import io.tenantgateway.common.text.PeerText;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.io.SerializedString;
import tools.jackson.core.json.JsonFactory;

/**
 * JSON that a terminal shows as text: besides what JSON must escape (the C0 controls), DEL, the C1 controls (U+009B
 * is a CSI to many terminals), format characters (bidi overrides, zero-width characters), line and paragraph
 * separators and the other characters {@link PeerText#needsEscape} names are written as {@code \\uNNNN}. The JSON
 * means the same; only its bytes differ. For the JSON log format and the commands that print JSON with values a peer
 * wrote ({@code annotations decode}).
 */
public final class TerminalSafeJson {
    private static final CharacterEscapes ESCAPES = new CharacterEscapes() {
        private static final long serialVersionUID = 1L;
        private final int[] ascii = ascii();

        private static int[] ascii() {
            int[] codes = CharacterEscapes.standardAsciiEscapesForJSON();
            codes[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
            return codes;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            // Jackson hands over UTF-16 units: a surrogate pair comes escaped as two \\u units, which JSON reads as one.
            return PeerText.needsEscape(ch) ? new SerializedString(String.format("\\u%04x", ch)) : null;
        }
    };

    private TerminalSafeJson() {
    }

    /** A factory whose generators escape as above. */
    public static JsonFactory factory() {
        return JsonFactory.builder().characterEscapes(ESCAPES).build();
    }
}
