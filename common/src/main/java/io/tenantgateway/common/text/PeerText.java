package io.tenantgateway.common.text;

import static java.util.Objects.requireNonNull;

/**
 * A string a peer supplied (a field or annotation of an API object, a kubelet's request, stdin, a file) on its way to
 * a terminal, a log line or an error text another peer reads (a gRPC status, a readiness reason): its control and
 * other invisible characters escaped, so that it cannot move a terminal's cursor, set its clipboard (OSC 52), ring
 * it or start a line of its own, and its length bounded, so that one value cannot fill a header or a log.
 *
 * <p>Escapes are Go's {@code strconv.Quote} ones, which operators know from klog and HAMi's messages: {@code \a \b
 * \f \n \r \t \v}, {@code \xNN} for the other ASCII controls and DEL, {@code \\uNNNN} (or {@code \UNNNNNNNN}) for the
 * C1 controls, format characters (bidi overrides, zero-width characters), line and paragraph separators, spaces
 * other than U+0020, private-use, unassigned and lone surrogate code points. Everything else is kept, non-ASCII
 * letters included.
 *
 * <p>Bounds count UTF-8 bytes of the escaped text; what is cut says so, naming the original's size and the limit:
 * {@code "GPU-0aaaa"… (truncated, 20480 bytes, limit 256)}. An escape sequence is never cut in half.
 *
 * <p>Stateless; any thread.
 */
public final class PeerText {
    /** The most bytes of one peer-supplied value quoted inside a message ({@link #quote(String)}). */
    public static final int VALUE_LIMIT = 256;
    /**
     * The most bytes of a whole error text that leaves the process or is logged ({@link #bound(String)}): a gRPC
     * status's description, an Allocate refusal. Far below kubelet's and gRPC's header limits (8 KiB and more).
     */
    public static final int TEXT_LIMIT = 1024;

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private PeerText() {
    }

    /** {@code text} in double quotes, escaped ({@code "} and {@code \} too), at most {@link #VALUE_LIMIT} bytes. */
    public static String quote(String text) {
        return quote(text, VALUE_LIMIT);
    }

    /** {@code text} in double quotes, escaped ({@code "} and {@code \} too), at most {@code limit} bytes of it. */
    public static String quote(String text, int limit) {
        if (text == null) {
            return "<nil>";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), limit) + 16).append('"');
        int end = append(out, text, true, limit);
        out.append('"');
        return end < text.length() ? truncated(out, text, limit) : out.toString();
    }

    /**
     * {@code text} escaped but not quoted ({@code "} and {@code \} kept: the text may quote its own parts), at most
     * {@link #TEXT_LIMIT} bytes: for a whole message that carries peer-supplied parts.
     */
    public static String bound(String text) {
        return bound(text, TEXT_LIMIT);
    }

    /** {@link #bound(String)} with {@code limit} bytes. */
    public static String bound(String text, int limit) {
        if (text == null) {
            return "<nil>";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), limit) + 48);
        int end = append(out, text, false, limit);
        return end < text.length() ? truncated(out, text, limit) : out.toString();
    }

    /**
     * {@code text} as it is, cut at {@code limit} UTF-8 bytes with the same note (for a writer that escapes by
     * itself: JSON); the same instance when it fits.
     */
    public static String truncate(String text, int limit) {
        if (text == null || text.length() * 3L <= limit || utf8Length(text) <= limit) {
            return text;
        }
        int budget = limit;
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            int cost = utf8Size(cp);
            if (cost > budget) {
                break;
            }
            budget -= cost;
            i += Character.charCount(cp);
        }
        return truncated(new StringBuilder(i + 48).append(text, 0, i), text, limit);
    }

    /** {@code text} escaped, unquoted and whole: a table cell or a value printed on its own. */
    public static String escape(String text) {
        if (text == null) {
            return "<nil>";
        }
        if (isPlain(text)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 16);
        append(out, text, false, Integer.MAX_VALUE);
        return out.toString();
    }

    /** Appends Go's {@code strconv.Quote} of {@code text}, whole: a klog value or message. */
    public static void appendQuoted(StringBuilder out, String text) {
        requireNonNull(out, "out");
        out.append('"');
        append(out, requireNonNull(text, "text"), true, Integer.MAX_VALUE);
        out.append('"');
    }

    /** Appends {@code text} escaped, unquoted and whole. */
    public static void appendEscaped(StringBuilder out, String text) {
        append(requireNonNull(out, "out"), requireNonNull(text, "text"), false, Integer.MAX_VALUE);
    }

    /** Whether {@link #escape} leaves {@code text} as it is (no character to escape). */
    public static boolean isPlain(String text) {
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (needsEscape(cp)) {
                return false;
            }
            i += Character.charCount(cp);
        }
        return true;
    }

    /** Whether {@code cp} is written as an escape: what a terminal could act on or nobody could see. */
    public static boolean needsEscape(int cp) {
        if (cp >= 0x20 && cp < 0x7f) {
            return false;
        }
        if (cp < 0x20 || cp == 0x7f) {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR, Character.PRIVATE_USE, Character.SURROGATE, Character.UNASSIGNED -> true;
            default -> false;
        };
    }

    /** The UTF-8 size of {@code text}: what a Go peer counts (a lone surrogate counts 3). */
    public static long utf8Length(String text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /**
     * Appends {@code text} escaped until {@code limit} UTF-8 bytes are written.
     *
     * @return the index in {@code text} where it stopped ({@code text.length()}: all of it)
     */
    private static int append(StringBuilder out, String text, boolean quoted, int limit) {
        int budget = limit;
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            int before = out.length();
            int cost;
            if (quoted && (cp == '"' || cp == '\\')) {
                out.append('\\').append((char) cp);
                cost = 2;
            } else if (needsEscape(cp)) {
                escapeTo(out, cp);
                cost = out.length() - before; // ASCII only
            } else {
                out.appendCodePoint(cp);
                cost = utf8Size(cp);
            }
            if (cost > budget) {
                out.setLength(before);
                return i;
            }
            budget -= cost;
            i += Character.charCount(cp);
        }
        return i;
    }

    private static int utf8Size(int cp) {
        return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    }

    private static void escapeTo(StringBuilder out, int cp) {
        switch (cp) {
            case 0x07 -> out.append("\\a");
            case '\b' -> out.append("\\b");
            case '\f' -> out.append("\\f");
            case '\n' -> out.append("\\n");
            case '\r' -> out.append("\\r");
            case '\t' -> out.append("\\t");
            case 0x0b -> out.append("\\v");
            default -> {
                if (cp < 0x80) {
                    out.append("\\x").append(HEX[cp >> 4]).append(HEX[cp & 0xf]);
                } else if (cp <= 0xffff) {
                    out.append("\\u");
                    hex(out, cp, 4);
                } else {
                    out.append("\\U");
                    hex(out, cp, 8);
                }
            }
        }
    }

    private static void hex(StringBuilder out, int value, int digits) {
        for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
            out.append(HEX[(value >> shift) & 0xf]);
        }
    }

    private static String truncated(StringBuilder out, String text, int limit) {
        return out.append("… (truncated, ").append(utf8Length(text)).append(" bytes, limit ").append(limit)
                .append(')').toString();
    }
}
