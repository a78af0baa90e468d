package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A parsed JSON value, just enough for HAMi's annotation values: objects keep their members in
 * order, duplicates included (Go's {@code encoding/json} lets the last one win; callers decide).
 * This module has no dependencies beyond the JDK, so it carries its own small strict RFC 8259
 * reader instead of Jackson.
 *
 * <p>Immutable; safe from any thread.
 */
final class JsonValue {
    enum Kind { NULL, BOOLEAN, NUMBER, STRING, ARRAY, OBJECT }

    /** Deeper nesting than this is refused, so that hostile input cannot overflow the stack. */
    private static final int MAX_DEPTH = 512;
    private static final BigInteger INT_MIN = BigInteger.valueOf(Integer.MIN_VALUE);
    private static final BigInteger INT_MAX = BigInteger.valueOf(Integer.MAX_VALUE);

    private final Kind kind;
    private final String text;
    private final String string;
    private final boolean bool;
    private final List<JsonValue> elements;
    private final List<Map.Entry<String, JsonValue>> members;

    private JsonValue(Kind kind, String text, String string, boolean bool, List<JsonValue> elements,
                      List<Map.Entry<String, JsonValue>> members) {
        this.kind = kind;
        this.text = text;
        this.string = string;
        this.bool = bool;
        this.elements = elements;
        this.members = members;
    }

    /**
     * Parses one JSON text; only whitespace may follow it.
     *
     * @throws IllegalArgumentException naming the offset and what was expected there
     */
    static JsonValue parse(String json) {
        requireNonNull(json, "json");
        Parser parser = new Parser(json);
        JsonValue value = parser.value(0);
        parser.skipWhitespace();
        if (parser.pos < json.length()) {
            throw parser.error("end of input");
        }
        return value;
    }

    Kind kind() {
        return kind;
    }

    boolean isNull() {
        return kind == Kind.NULL;
    }

    boolean isArray() {
        return kind == Kind.ARRAY;
    }

    boolean isObject() {
        return kind == Kind.OBJECT;
    }

    boolean isString() {
        return kind == Kind.STRING;
    }

    boolean isBoolean() {
        return kind == Kind.BOOLEAN;
    }

    /** A number written without fraction or exponent ({@code 1}, not {@code 1.0} or {@code 1e0}). */
    boolean isIntegralNumber() {
        return kind == Kind.NUMBER && text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
    }

    /** An integral number within {@code int} range. */
    boolean isInt() {
        if (!isIntegralNumber()) {
            return false;
        }
        BigInteger value = new BigInteger(text);
        return value.compareTo(INT_MIN) >= 0 && value.compareTo(INT_MAX) <= 0;
    }

    int intValue() {
        if (!isInt()) {
            throw new IllegalStateException("not an int: " + text);
        }
        return Integer.parseInt(text);
    }

    String stringValue() {
        if (kind != Kind.STRING) {
            throw new IllegalStateException("not a string: " + text);
        }
        return string;
    }

    boolean booleanValue() {
        if (kind != Kind.BOOLEAN) {
            throw new IllegalStateException("not a boolean: " + text);
        }
        return bool;
    }

    /** The elements of an array (empty for any other kind). */
    List<JsonValue> elements() {
        return elements;
    }

    /** The members of an object, in document order, duplicates kept (empty for any other kind). */
    List<Map.Entry<String, JsonValue>> members() {
        return members;
    }

    /** The value exactly as written in the input; used in error messages. */
    @Override
    public String toString() {
        return text;
    }

    private static final class Parser {
        private final String in;
        private int pos;

        Parser(String in) {
            this.in = in;
        }

        JsonValue value(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("at most " + MAX_DEPTH + " levels of nesting");
            }
            skipWhitespace();
            if (pos >= in.length()) {
                throw error("a value");
            }
            int start = pos;
            char c = in.charAt(pos);
            switch (c) {
                case '{' -> {
                    return object(start, depth);
                }
                case '[' -> {
                    return array(start, depth);
                }
                case '"' -> {
                    String s = string();
                    return new JsonValue(Kind.STRING, in.substring(start, pos), s, false, List.of(), List.of());
                }
                case 't' -> {
                    literal("true");
                    return new JsonValue(Kind.BOOLEAN, "true", null, true, List.of(), List.of());
                }
                case 'f' -> {
                    literal("false");
                    return new JsonValue(Kind.BOOLEAN, "false", null, false, List.of(), List.of());
                }
                case 'n' -> {
                    literal("null");
                    return new JsonValue(Kind.NULL, "null", null, false, List.of(), List.of());
                }
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        number();
                        return new JsonValue(Kind.NUMBER, in.substring(start, pos), null, false, List.of(),
                                List.of());
                    }
                    throw error("a value");
                }
            }
        }

        private JsonValue object(int start, int depth) {
            pos++; // '{'
            List<Map.Entry<String, JsonValue>> members = new ArrayList<>();
            skipWhitespace();
            if (peek() == '}') {
                pos++;
            } else {
                while (true) {
                    skipWhitespace();
                    if (peek() != '"') {
                        throw error("a member name in double quotes");
                    }
                    String name = string();
                    skipWhitespace();
                    expect(':');
                    members.add(Map.entry(name, value(depth + 1)));
                    skipWhitespace();
                    char c = peek();
                    pos++;
                    if (c == '}') {
                        break;
                    }
                    if (c != ',') {
                        pos--;
                        throw error("',' or '}'");
                    }
                }
            }
            return new JsonValue(Kind.OBJECT, in.substring(start, pos), null, false, List.of(),
                    List.copyOf(members));
        }

        private JsonValue array(int start, int depth) {
            pos++; // '['
            List<JsonValue> elements = new ArrayList<>();
            skipWhitespace();
            if (peek() == ']') {
                pos++;
            } else {
                while (true) {
                    elements.add(value(depth + 1));
                    skipWhitespace();
                    char c = peek();
                    pos++;
                    if (c == ']') {
                        break;
                    }
                    if (c != ',') {
                        pos--;
                        throw error("',' or ']'");
                    }
                }
            }
            return new JsonValue(Kind.ARRAY, in.substring(start, pos), null, false, List.copyOf(elements),
                    List.of());
        }

        private String string() {
            pos++; // opening quote
            StringBuilder out = new StringBuilder();
            while (true) {
                if (pos >= in.length()) {
                    throw error("a closing '\"'");
                }
                char c = in.charAt(pos++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    pos--;
                    throw error("no unescaped control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (pos >= in.length()) {
                    throw error("an escape character");
                }
                char e = in.charAt(pos++);
                switch (e) {
                    case '"' -> out.append('"');
                    case '\\' -> out.append('\\');
                    case '/' -> out.append('/');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> out.append(hex4());
                    default -> {
                        pos--;
                        throw error("one of \" \\ / b f n r t u after '\\'");
                    }
                }
            }
        }

        private char hex4() {
            if (pos + 4 > in.length()) {
                throw error("four hex digits");
            }
            int value = 0;
            for (int i = 0; i < 4; i++) {
                int digit = Character.digit(in.charAt(pos), 16);
                if (digit < 0) {
                    throw error("four hex digits");
                }
                value = value * 16 + digit;
                pos++;
            }
            return (char) value;
        }

        private void number() {
            if (peek() == '-') {
                pos++;
            }
            if (peek() == '0') {
                pos++;
            } else if (isDigit(peek())) {
                digits();
            } else {
                throw error("a digit");
            }
            if (peek() == '.') {
                pos++;
                if (!isDigit(peek())) {
                    throw error("a digit after '.'");
                }
                digits();
            }
            if (peek() == 'e' || peek() == 'E') {
                pos++;
                if (peek() == '+' || peek() == '-') {
                    pos++;
                }
                if (!isDigit(peek())) {
                    throw error("a digit in the exponent");
                }
                digits();
            }
        }

        private void digits() {
            while (isDigit(peek())) {
                pos++;
            }
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private void literal(String word) {
            if (!in.startsWith(word, pos)) {
                throw error("'" + word + "'");
            }
            pos += word.length();
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("'" + c + "'");
            }
            pos++;
        }

        /** The current character, or U+0000 at the end (never valid where a token is expected). */
        private char peek() {
            return pos < in.length() ? in.charAt(pos) : '\0';
        }

        void skipWhitespace() {
            while (pos < in.length()) {
                char c = in.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                pos++;
            }
        }

        IllegalArgumentException error(String expected) {
            String found = pos >= in.length() ? "end of input" : "'" + in.charAt(pos) + "'";
            return new IllegalArgumentException(found + " at offset " + pos + " (expected: " + expected + ")");
        }
    }
}
