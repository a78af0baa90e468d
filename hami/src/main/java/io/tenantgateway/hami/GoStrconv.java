package io.tenantgateway.hami;

/**
 * The parts of Go's {@code strconv} whose behaviour and error text HAMi's decoders pass on to users.
 *
 * <p>Error texts (Go's {@code *strconv.NumError.Error()}: {@code "strconv." + Func + ": parsing " + Quote(Num) + ": "
 * + Err}): {@code strconv.ParseInt: parsing "x": invalid syntax}, {@code strconv.ParseInt: parsing "9999999999":
 * value out of range}, {@code strconv.Atoi: parsing "x": invalid syntax} (64-bit {@code int}), {@code
 * strconv.ParseBool: parsing "x": invalid syntax}. Base 10 takes an optional {@code +}/{@code -} then ASCII digits
 * only (no underscores, no spaces). On a range error Go returns the clamped limit, on a syntax error 0.
 */
final class GoStrconv {
    private GoStrconv() {
    }

    /** A parse outcome: {@code value} as Go returns it (clamped or 0 on error) and the error text or null. */
    record Parsed(long value, String error) {
        boolean ok() {
            return error == null;
        }
    }

    /** Go's {@code strconv.ParseInt(s, 10, bits)}. */
    static Parsed parseInt(String s, int bits) {
        return parse(s, bits, "ParseInt");
    }

    /** Go's {@code strconv.Atoi(s)} on a 64-bit platform. */
    static Parsed atoi(String s) {
        return parse(s, 64, "Atoi");
    }

    private static Parsed parse(String s, int bits, String fn) {
        int i = 0;
        boolean negative = false;
        if (!s.isEmpty() && (s.charAt(0) == '+' || s.charAt(0) == '-')) {
            negative = s.charAt(0) == '-';
            i = 1;
        }
        if (i >= s.length()) {
            return new Parsed(0, error(fn, s, "invalid syntax"));
        }
        java.math.BigInteger magnitude = java.math.BigInteger.ZERO;
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return new Parsed(0, error(fn, s, "invalid syntax"));
            }
            magnitude = magnitude.multiply(java.math.BigInteger.TEN).add(java.math.BigInteger.valueOf(c - '0'));
        }
        java.math.BigInteger value = negative ? magnitude.negate() : magnitude;
        java.math.BigInteger max = java.math.BigInteger.ONE.shiftLeft(bits - 1).subtract(java.math.BigInteger.ONE);
        java.math.BigInteger min = java.math.BigInteger.ONE.shiftLeft(bits - 1).negate();
        if (value.compareTo(max) > 0) {
            return new Parsed(max.longValue(), error(fn, s, "value out of range"));
        }
        if (value.compareTo(min) < 0) {
            return new Parsed(min.longValue(), error(fn, s, "value out of range"));
        }
        return new Parsed(value.longValue(), null);
    }

    /** Go's {@code strconv.ParseBool}: 1 t T TRUE true True / 0 f F FALSE false False; value 1 for true. */
    static Parsed parseBool(String s) {
        return switch (s) {
            case "1", "t", "T", "TRUE", "true", "True" -> new Parsed(1, null);
            case "0", "f", "F", "FALSE", "false", "False" -> new Parsed(0, null);
            default -> new Parsed(0, error("ParseBool", s, "invalid syntax"));
        };
    }

    private static String error(String fn, String s, String err) {
        return "strconv." + fn + ": parsing " + quote(s) + ": " + err;
    }

    /**
     * {@link #quote} of {@code s}'s first {@code max} characters, then {@code …(N characters)} when there were more:
     * for a peer's value inside an error text that must stay short.
     */
    static String quoteAbbreviated(String s, int max) {
        if (s.length() <= max) {
            return quote(s);
        }
        int end = Character.isHighSurrogate(s.charAt(max - 1)) ? max - 1 : max;
        return quote(s.substring(0, end)) + "…(" + s.length() + " characters)";
    }

    /**
     * Go's {@code strconv.Quote} (also {@code %q}): {@code "} and {@code \} escaped, {@code \a \b \f \n \r \t \v},
     * other control characters as {@code \xNN} (below U+0080) or {@code \\uNNNN}; printable characters kept. Lone
     * surrogates (which Go would see as invalid UTF-8) are written as {@code \\ufffd}.
     */
    static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            switch (cp) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case 7 -> out.append("\\a");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case 11 -> out.append("\\v");
                default -> {
                    if (cp < 0x20 || cp == 0x7f) {
                        out.append(String.format("\\x%02x", cp));
                    } else if (Character.isSurrogate((char) cp)) {
                        out.append("\\ufffd");
                    } else if (Character.isISOControl(cp) || !Character.isDefined(cp)) {
                        out.append(cp > 0xffff ? String.format("\\U%08x", cp) : String.format("\\u%04x", cp));
                    } else {
                        out.appendCodePoint(cp);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
