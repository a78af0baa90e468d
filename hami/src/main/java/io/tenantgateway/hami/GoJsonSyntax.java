package io.tenantgateway.hami;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The syntax check Go's {@code encoding/json} runs over a whole value before it decodes anything
 * ({@code checkValid}), with its error texts: a value that is not JSON fails in HAMi's scheduler with exactly the
 * message returned here, whatever type it was to be decoded into.
 *
 * <p>Go scans bytes, so the input is checked as its UTF-8 bytes and a byte is named as Go names it: the byte as the
 * code point of the same number ({@code 0xC3} is {@code 'Ã'}), quoted the way {@code strconv.Quote} quotes it.
 * Messages: {@code unexpected end of JSON input}, or {@code invalid character <c> <context>} with these contexts:
 * {@code looking for beginning of value}, {@code looking for beginning of object key string}, {@code after object
 * key}, {@code after object key:value pair}, {@code after array element}, {@code after top-level value},
 * {@code in string literal}, {@code in string escape code}, <code>in &#92;u hexadecimal character escape</code>,
 * {@code in numeric literal}, {@code after decimal point in numeric literal}, {@code in exponent of numeric
 * literal}, {@code in literal true (expecting 'r')} (and the other letters of {@code true}, {@code false},
 * {@code null}), {@code exceeded max depth} (more than 10000 nested arrays and objects).
 *
 * <p>Pure; iterative (no recursion, so no stack depth to run out of).
 */
final class GoJsonSyntax {
    /** Go's {@code maxNestingDepth}. */
    static final int MAX_DEPTH = 10_000;

    private GoJsonSyntax() {
    }

    private static final byte OBJECT_KEY = 0;
    private static final byte OBJECT_VALUE = 1;
    private static final byte ARRAY_VALUE = 2;

    /** Go's error for {@code text}, or empty when Go accepts it as one JSON value. */
    static Optional<String> check(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        byte[] stack = new byte[16];
        int depth = 0;
        int i = 0;
        int n = b.length;
        // Expecting a value (true after '[' too: then ']' may close it).
        boolean emptyArrayAllowed = false;
        boolean emptyObjectAllowed = false;
        boolean wantValue = true;
        boolean wantKey = false;
        while (true) {
            if (wantValue || wantKey) {
                i = skipSpace(b, i);
                if (i >= n) {
                    return end();
                }
                int c = b[i] & 0xff;
                if (wantKey) {
                    if (c == '}' && emptyObjectAllowed) {
                        depth--;
                        i++;
                        wantKey = false;
                        emptyObjectAllowed = false;
                        // fall through to "after a value" below
                    } else if (c != '"') {
                        return error(c, "looking for beginning of object key string");
                    } else {
                        emptyObjectAllowed = false;
                        String[] context = new String[1];
                        int after = string(b, i + 1, context);
                        if (after < 0) {
                            return stringError(b, -after - 1, context[0]);
                        }
                        i = after;
                        wantKey = false;
                    }
                } else {
                    if (c == ']' && emptyArrayAllowed) {
                        depth--;
                        i++;
                        wantValue = false;
                        emptyArrayAllowed = false;
                    } else {
                        emptyArrayAllowed = false;
                        switch (c) {
                            case '{', '[' -> {
                                if (depth == stack.length) {
                                    stack = java.util.Arrays.copyOf(stack, stack.length * 2);
                                }
                                stack[depth++] = c == '{' ? OBJECT_KEY : ARRAY_VALUE;
                                if (depth > MAX_DEPTH) {
                                    return error(c, "exceeded max depth");
                                }
                                i++;
                                if (c == '{') {
                                    wantValue = false;
                                    wantKey = true;
                                    emptyObjectAllowed = true;
                                } else {
                                    emptyArrayAllowed = true;
                                }
                                continue;
                            }
                            case '"' -> {
                                String[] context = new String[1];
                                int after = string(b, i + 1, context);
                                if (after < 0) {
                                    return stringError(b, -after - 1, context[0]);
                                }
                                i = after;
                            }
                            case 't' -> {
                                Optional<String> bad = literal(b, i, "true");
                                if (bad != null) {
                                    return bad;
                                }
                                i += 4;
                            }
                            case 'f' -> {
                                Optional<String> bad = literal(b, i, "false");
                                if (bad != null) {
                                    return bad;
                                }
                                i += 5;
                            }
                            case 'n' -> {
                                Optional<String> bad = literal(b, i, "null");
                                if (bad != null) {
                                    return bad;
                                }
                                i += 4;
                            }
                            default -> {
                                if (c != '-' && (c < '0' || c > '9')) {
                                    return error(c, "looking for beginning of value");
                                }
                                int after = number(b, i);
                                if (after < 0) {
                                    int at = -after - 1;
                                    // At the end Go steps once more with a space, which no unfinished number continues with.
                                    return error(at >= n ? ' ' : b[at] & 0xff, numberContext(b, i, at));
                                }
                                i = after;
                            }
                        }
                        wantValue = false;
                    }
                }
            }
            // After a value (or a key).
            if (depth == 0) {
                i = skipSpace(b, i);
                return i >= n ? Optional.empty() : error(b[i] & 0xff, "after top-level value");
            }
            i = skipSpace(b, i);
            if (i >= n) {
                return end();
            }
            int c = b[i] & 0xff;
            switch (stack[depth - 1]) {
                case OBJECT_KEY -> {
                    if (c != ':') {
                        return error(c, "after object key");
                    }
                    stack[depth - 1] = OBJECT_VALUE;
                    wantValue = true;
                }
                case OBJECT_VALUE -> {
                    if (c == ',') {
                        stack[depth - 1] = OBJECT_KEY;
                        wantKey = true;
                    } else if (c == '}') {
                        depth--;
                    } else {
                        return error(c, "after object key:value pair");
                    }
                }
                default -> {
                    if (c == ',') {
                        wantValue = true;
                    } else if (c == ']') {
                        depth--;
                    } else {
                        return error(c, "after array element");
                    }
                }
            }
            i++;
        }
    }

    private static int skipSpace(byte[] b, int i) {
        while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) {
            i++;
        }
        return i;
    }

    private static Optional<String> end() {
        return Optional.of("unexpected end of JSON input");
    }

    private static Optional<String> error(int c, String context) {
        return Optional.of("invalid character " + GoJson.quoteByte(c) + " " + context);
    }

    /** {@code null} when {@code b[i..]} starts with {@code word}, else Go's error. */
    private static Optional<String> literal(byte[] b, int i, String word) {
        for (int k = 1; k < word.length(); k++) {
            // At the end Go steps once more with a space, which no literal continues with.
            int c = i + k >= b.length ? ' ' : b[i + k] & 0xff;
            if (c != word.charAt(k)) {
                return error(c, "in literal " + word + " (expecting '" + word.charAt(k) + "')");
            }
        }
        return null;
    }

    /**
     * The index after the closing quote of the string whose body starts at {@code i}, or {@code -(at + 1)} where it
     * fails ({@code at} may be the end); {@code context[0]} then says where in the string.
     */
    private static int string(byte[] b, int i, String[] context) {
        while (i < b.length) {
            int c = b[i] & 0xff;
            if (c == '"') {
                return i + 1;
            }
            if (c < 0x20) {
                context[0] = "in string literal";
                return -(i + 1);
            }
            if (c == '\\') {
                i++;
                context[0] = "in string escape code";
                if (i >= b.length) {
                    return -(i + 1);
                }
                int e = b[i] & 0xff;
                if (e == 'u') {
                    context[0] = "in \\u hexadecimal character escape";
                    for (int k = 1; k <= 4; k++) {
                        if (i + k >= b.length || !isHex(b[i + k] & 0xff)) {
                            return -(i + k + 1);
                        }
                    }
                    i += 4;
                } else if ("bfnrt\\/\"".indexOf(e) < 0) {
                    return -(i + 1);
                }
            }
            i++;
        }
        context[0] = "in string literal";
        return -(i + 1);
    }

    /**
     * Go's error at {@code at} inside a string. At the end of the input Go steps once more with a space: inside an
     * escape that is an invalid character, in the string's body it is not (the input just ended).
     */
    private static Optional<String> stringError(byte[] b, int at, String context) {
        if (at >= b.length) {
            return context.equals("in string literal") ? end() : error(' ', context);
        }
        return error(b[at] & 0xff, context);
    }

    private static boolean isHex(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** The index after the number at {@code i}, or {@code -(at + 1)} where it fails. */
    private static int number(byte[] b, int i) {
        int n = b.length;
        if (b[i] == '-') {
            i++;
            if (i >= n || b[i] < '0' || b[i] > '9') {
                return -(i + 1);
            }
        }
        if (b[i] == '0') {
            i++;
        } else {
            while (i < n && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
        }
        if (i < n && b[i] == '.') {
            i++;
            if (i >= n || b[i] < '0' || b[i] > '9') {
                return -(i + 1);
            }
            while (i < n && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
        }
        if (i < n && (b[i] == 'e' || b[i] == 'E')) {
            i++;
            if (i < n && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            if (i >= n || b[i] < '0' || b[i] > '9') {
                return -(i + 1);
            }
            while (i < n && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
        }
        return i;
    }

    /** Which part of the number starting at {@code start} failed at {@code at}. */
    private static String numberContext(byte[] b, int start, int at) {
        int prev = b[at - 1] & 0xff;
        if (prev == '-' && at - 1 == start) {
            return "in numeric literal";
        }
        if (prev == '.') {
            return "after decimal point in numeric literal";
        }
        return "in exponent of numeric literal";
    }
}
