package io.tenantgateway.hami;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Go's {@code encoding/json} as HAMi uses it for register values: reading into a struct (keys matched
 * case-insensitively, last duplicate wins, {@code null} leaves the zero value, unknown keys ignored) with Go's error
 * texts, and writing a struct with {@code omitempty} fields in declaration order.
 *
 * <p>Error texts reproduced: every syntax error as Go's scanner words it ({@link GoJsonSyntax}: {@code unexpected
 * end of JSON input}, {@code invalid character 'o' in literal null (expecting 'u')}, …), checked over the whole input
 * first as Go does, then {@code json: cannot unmarshal <kind> into Go value of type <T>} and {@code json: cannot
 * unmarshal <kind> into Go struct field <S>.<f> of type <T>} (for numbers that do not fit: {@code number
 * <literal>}). Go keeps decoding after a type error and reports the first one; the first one is what is reported
 * here too. Only input Go accepts but this parser cannot follow (nesting deeper than 512) reads {@code invalid
 * JSON: <where>}, which is not Go's wording.
 */
final class GoJson {
    private GoJson() {
    }

    /** A Go-side error: its message is what HAMi would report. */
    static final class GoJsonException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        GoJsonException(String message) {
            super(message);
        }
    }

    enum GoType {
        STRING("string"), BOOL("bool"), INT32("int32"), INT("int"), INT64("int64"), UINT("uint"),
        ANY_MAP("map[string]interface {}"), STRING_MAP("map[string]string"), ANY("interface {}");

        final String goName;

        GoType(String goName) {
            this.goName = goName;
        }
    }

    record Field(String name, GoType type, boolean omitEmpty) {
    }

    /** A Go struct: its name as Go's errors print it and its JSON fields in declaration order. */
    record Struct(String goName, List<Field> fields) {
        Field field(String key) {
            Field folded = null;
            for (Field f : fields) {
                if (f.name.equals(key)) {
                    return f;
                }
                if (folded == null && f.name.equalsIgnoreCase(key)) {
                    folded = f;
                }
            }
            return folded;
        }
    }

    /**
     * Parses {@code text}; input Go's {@code encoding/json} refuses fails with Go's error text
     * ({@link GoJsonSyntax}), checked before anything is decoded, as Go checks it.
     */
    static JsonValue parse(String text) {
        java.util.Optional<String> goError = GoJsonSyntax.check(text);
        if (goError.isPresent()) {
            throw new GoJsonException(goError.get());
        }
        try {
            return JsonValue.parse(text);
        } catch (IllegalArgumentException e) {
            // Valid for Go but beyond this parser's limits (nesting deeper than it follows).
            throw new GoJsonException("invalid JSON: " + e.getMessage());
        }
    }

    /**
     * Go's {@code quoteChar} of one input byte {@code c} (0..255): Go converts the byte to the code point of the same
     * number before quoting, so {@code 0xC3} reads {@code 'Ã'}, and escapes what {@code strconv.IsPrint} calls
     * unprintable (C0 and C1 controls, DEL, U+00A0, U+00AD).
     */
    static String quoteByte(int c) {
        if (c >= 0x80 && (c <= 0xa0 || c == 0xad)) {
            return String.format(Locale.ROOT, "'\\u%04x'", c);
        }
        return quoteChar(c);
    }

    /** Go's {@code quoteChar}: {@code 'x'}, with {@code '\''} and {@code '"'} and escapes for the rest. */
    static String quoteChar(int cp) {
        if (cp == '\'') {
            return "'\\''";
        }
        if (cp == '"') {
            return "'\"'";
        }
        String q = GoStrconv.quote(new String(Character.toChars(cp)));
        return "'" + q.substring(1, q.length() - 1) + "'";
    }

    static String kind(JsonValue v) {
        return switch (v.kind()) {
            case OBJECT -> "object";
            case ARRAY -> "array";
            case STRING -> "string";
            case NUMBER -> "number";
            case BOOLEAN -> "bool";
            case NULL -> "null";
        };
    }

    /** Decodes a list of {@code struct} objects; {@code null} elements stay null (Go's nil pointers). */
    static List<Map<String, Object>> decodeList(JsonValue root, Struct struct, String sliceType) {
        if (root.isNull()) {
            return List.of();
        }
        if (!root.isArray()) {
            throw new GoJsonException("json: cannot unmarshal " + kind(root) + " into Go value of type " + sliceType);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (JsonValue element : root.elements()) {
            if (element.isNull()) {
                out.add(null);
            } else if (!element.isObject()) {
                throw new GoJsonException("json: cannot unmarshal " + kind(element) + " into Go value of type "
                        + struct.goName);
            } else {
                out.add(decodeStruct(element, struct, struct.goName.substring(struct.goName.indexOf('.') + 1)));
            }
        }
        return out;
    }

    /** Decodes one object into field name → value (only fields present and not null). */
    static Map<String, Object> decodeStruct(JsonValue object, Struct struct, String path) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, JsonValue> member : object.members()) {
            Field field = struct.field(member.getKey());
            if (field == null || member.getValue().isNull()) {
                if (field != null && (field.type == GoType.ANY_MAP || field.type == GoType.STRING_MAP
                        || field.type == GoType.ANY)) {
                    values.remove(field.name);
                }
                continue;
            }
            values.put(field.name, value(member.getValue(), field.type, path + "." + field.name));
        }
        return values;
    }

    static Object value(JsonValue v, GoType type, String path) {
        switch (type) {
            case STRING -> {
                if (!v.isString()) {
                    throw fieldError(kind(v), path, type);
                }
                return v.stringValue();
            }
            case BOOL -> {
                if (!v.isBoolean()) {
                    throw fieldError(kind(v), path, type);
                }
                return v.booleanValue();
            }
            case INT32, INT, INT64, UINT -> {
                if (v.kind() != JsonValue.Kind.NUMBER) {
                    throw fieldError(kind(v), path, type);
                }
                BigInteger n = integral(v);
                BigInteger min = switch (type) {
                    case INT32 -> BigInteger.valueOf(Integer.MIN_VALUE);
                    case INT, INT64 -> BigInteger.valueOf(Long.MIN_VALUE);
                    default -> BigInteger.ZERO;
                };
                BigInteger max = switch (type) {
                    case INT32 -> BigInteger.valueOf(Integer.MAX_VALUE);
                    case INT, INT64 -> BigInteger.valueOf(Long.MAX_VALUE);
                    default -> BigInteger.valueOf(Long.MAX_VALUE); // uint above this is not representable here
                };
                if (n == null || n.compareTo(min) < 0 || n.compareTo(max) > 0) {
                    throw fieldError("number " + v, path, type);
                }
                return n.longValue();
            }
            case ANY_MAP -> {
                if (!v.isObject()) {
                    throw fieldError(kind(v), path, type);
                }
                return anyValue(v);
            }
            case STRING_MAP -> {
                if (!v.isObject()) {
                    throw fieldError(kind(v), path, type);
                }
                Map<String, Object> map = new LinkedHashMap<>();
                for (Map.Entry<String, JsonValue> m : v.members()) {
                    if (m.getValue().isNull()) {
                        map.put(m.getKey(), "");
                    } else if (!m.getValue().isString()) {
                        throw fieldError(kind(m.getValue()), path, GoType.STRING);
                    } else {
                        map.put(m.getKey(), m.getValue().stringValue());
                    }
                }
                return map;
            }
            default -> {
                return anyValue(v);
            }
        }
    }

    private static BigInteger integral(JsonValue v) {
        try {
            return new BigDecimal(v.toString()).toBigIntegerExact();
        } catch (ArithmeticException | NumberFormatException e) {
            return null;
        }
    }

    private static GoJsonException fieldError(String what, String path, GoType type) {
        return new GoJsonException("json: cannot unmarshal " + what + " into Go struct field " + path + " of type "
                + type.goName);
    }

    /** Go's {@code interface{}} view of a JSON value: numbers become Long when integral and exact, else Double. */
    static Object anyValue(JsonValue v) {
        switch (v.kind()) {
            case NULL -> {
                return null;
            }
            case BOOLEAN -> {
                return v.booleanValue();
            }
            case STRING -> {
                return v.stringValue();
            }
            case NUMBER -> {
                double d = Double.parseDouble(v.toString());
                if (d == Math.rint(d) && Math.abs(d) < 9.007199254740992E15) {
                    return (long) d;
                }
                return d;
            }
            case ARRAY -> {
                List<Object> list = new ArrayList<>();
                for (JsonValue e : v.elements()) {
                    list.add(anyValue(e));
                }
                return list;
            }
            default -> {
                Map<String, Object> map = new LinkedHashMap<>();
                for (Map.Entry<String, JsonValue> m : v.members()) {
                    map.put(m.getKey(), anyValue(m.getValue()));
                }
                return map;
            }
        }
    }

    // ---- writing ----

    /** Writes {@code values} as Go marshals {@code struct}: declaration order, omitempty zero values left out. */
    static void writeStruct(Struct struct, Map<String, Object> values, StringBuilder out) {
        out.append('{');
        boolean first = true;
        for (Field field : struct.fields) {
            Object value = values.get(field.name);
            if (field.omitEmpty && isEmpty(value)) {
                continue;
            }
            if (!first) {
                out.append(',');
            }
            first = false;
            out.append('"').append(field.name).append("\":");
            writeAny(value == null ? zero(field.type) : value, out);
        }
        out.append('}');
    }

    private static Object zero(GoType type) {
        return switch (type) {
            case STRING -> "";
            case BOOL -> Boolean.FALSE;
            case INT32, INT, INT64, UINT -> 0L;
            default -> null;
        };
    }

    private static boolean isEmpty(Object value) {
        return value == null || "".equals(value) || Boolean.FALSE.equals(value)
                || (value instanceof Number n && n.doubleValue() == 0)
                || (value instanceof Map<?, ?> m && m.isEmpty()) || (value instanceof List<?> l && l.isEmpty());
    }

    /** Writes a Go {@code interface{}} value: maps with sorted keys, Go's float format, Go's string escaping. */
    static void writeAny(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            HamiDeviceCodec.appendGoJsonString(s, out);
        } else if (value instanceof Boolean b) {
            out.append(b);
        } else if (value instanceof Long || value instanceof Integer) {
            out.append(value);
        } else if (value instanceof Number n) {
            out.append(goFloat(n.doubleValue()));
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                writeAny(list.get(i), out);
            }
            out.append(']');
        } else if (value instanceof Map<?, ?> map) {
            Map<String, Object> sorted = new TreeMap<>();
            map.forEach((k, v) -> sorted.put(String.valueOf(k), v));
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : sorted.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                HamiDeviceCodec.appendGoJsonString(e.getKey(), out);
                out.append(':');
                writeAny(e.getValue(), out);
            }
            out.append('}');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }

    /** Go's float64 JSON form: shortest digits, plain between 1e-6 and 1e21, else {@code 1e+21} style. */
    static String goFloat(double d) {
        double abs = Math.abs(d);
        if (abs == 0 || (abs >= 1e-6 && abs < 1e21)) {
            return new BigDecimal(Double.toString(d)).stripTrailingZeros().toPlainString();
        }
        String s = Double.toString(d).toLowerCase(Locale.ROOT).replace(".0e", "e");
        int e = s.indexOf('e');
        String exp = s.substring(e + 1);
        if (!exp.startsWith("-")) {
            exp = "+" + exp;
        }
        if (exp.length() == 2) {
            exp = exp.charAt(0) + "0" + exp.charAt(1);
        }
        return s.substring(0, e) + "e" + exp;
    }
}
