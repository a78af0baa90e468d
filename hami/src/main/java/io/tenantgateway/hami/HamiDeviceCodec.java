package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The value of HAMi's {@code hami.io/node-nvidia-register} annotation, both ways.
 *
 * <p>Writing produces exactly the bytes HAMi's device plugin writes (Go {@code encoding/json} of
 * {@code []DeviceInfo}): keys in the order {@code id, index, count, devmem, devcore, type, numa,
 * mode, health}, each left out when zero, false or empty, no whitespace, Go's string escaping.
 * Only JSON is written: schedulers since v2.8.0 reject the legacy text.
 *
 * <p>Reading accepts JSON the way Go's {@code json.Unmarshal} does (case-insensitive keys, unknown
 * keys such as {@code devicepairscore} ignored, {@code null} leaves the zero value) and, like the
 * scheduler, falls back to the legacy text {@code id,count,devmem,devcore,type,numa,health[,index,mode]:…}.
 * Unlike Go it rejects unparsable numbers instead of reading them as 0, and it rejects
 * {@code null} elements (the {@code [null]} value that crashes both scheduler versions).
 *
 * <p>Pure: no I/O, no state; safe from any thread.
 */
public final class HamiDeviceCodec {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private HamiDeviceCodec() {
    }

    /**
     * The annotation value for {@code devices}, in HAMi's exact JSON form (v2.10's writer; written by
     * {@link RegisterCodec#encodeJson}, which every vendor's JSON register value shares).
     */
    public static String encode(List<GpuDevice> devices) {
        requireNonNull(devices, "devices");
        List<RegisteredDevice> registered = new ArrayList<>(devices.size());
        for (int i = 0; i < devices.size(); i++) {
            registered.add(RegisteredDevice.of(requireNonNull(devices.get(i), "devices[" + i + "]")));
        }
        return RegisterCodec.encodeJson(registered, HamiRelease.V2_10);
    }

    /**
     * Appends {@code value} as a JSON string escaped the way Go's {@code encoding/json} does by
     * default: HTML-safe ({@code <}, {@code >}, {@code &} as six-character {@code \\u} escapes), U+2028/U+2029
     * escaped, control characters as {@code \n}, {@code \r}, {@code \t}, {@code \b}, {@code \f}
     * or a {@code \\u} escape, and invalid UTF-16 (lone surrogates) as U+FFFD.
     */
    static void appendGoJsonString(String value, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '<', '>', '&', '\u2028', '\u2029' -> appendUnicodeEscape(c, out);
                default -> {
                    if (c < 0x20) {
                        appendUnicodeEscape(c, out);
                    } else if (Character.isHighSurrogate(c) && i + 1 < value.length()
                            && Character.isLowSurrogate(value.charAt(i + 1))) {
                        out.append(c).append(value.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        out.append('\ufffd');
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void appendUnicodeEscape(char c, StringBuilder out) {
        out.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf])
                .append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
    }

    /**
     * Reads an annotation value written by HAMi's device plugin, a mock plugin or this agent:
     * JSON when it starts with {@code [}, the legacy text otherwise.
     *
     * @throws IllegalArgumentException naming the element and field that could not be read
     */
    public static List<GpuDevice> decode(String value) {
        requireNonNull(value, "value");
        Annotations.checkSize(Annotations.NODE_NVIDIA_REGISTER, value);
        String trimmed = value.strip();
        if (trimmed.startsWith("[")) {
            return decodeJson(trimmed);
        }
        return decodeLegacy(trimmed);
    }

    /** Reads the JSON form; see the class comment for the rules. */
    public static List<GpuDevice> decodeJson(String value) {
        Annotations.checkSize(Annotations.NODE_NVIDIA_REGISTER, value);
        JsonValue root;
        try {
            root = JsonValue.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("device list: not valid JSON (" + e.getMessage() + ")", e);
        }
        if (!root.isArray()) {
            throw new IllegalArgumentException("device list: " + abbreviate(value) + " (expected: a JSON array)");
        }
        List<JsonValue> elements = root.elements();
        List<GpuDevice> devices = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            JsonValue element = elements.get(i);
            if (!element.isObject()) {
                throw new IllegalArgumentException("device list: element " + i + ": " + element
                        + " (expected: a device object; [null] crashes the HAMi scheduler)");
            }
            devices.add(decodeJsonDevice(i, element));
        }
        return List.copyOf(devices);
    }

    private static GpuDevice decodeJsonDevice(int element, JsonValue object) {
        String id = "";
        String type = "";
        String mode = "";
        int index = 0;
        int count = 0;
        int devmem = 0;
        int devcore = 0;
        int numa = 0;
        boolean health = false;
        for (Map.Entry<String, JsonValue> property : object.members()) {
            JsonValue v = property.getValue();
            if (v.isNull()) {
                continue; // Go leaves the zero value in place
            }
            // Go's encoding/json matches keys case-insensitively; last duplicate wins.
            String key = property.getKey().toLowerCase(Locale.ROOT);
            switch (key) {
                case "id" -> id = jsonString(element, key, v);
                case "type" -> type = jsonString(element, key, v);
                case "mode" -> mode = jsonString(element, key, v);
                case "index" -> index = jsonInt(element, key, v);
                case "count" -> count = jsonInt(element, key, v);
                case "devmem" -> devmem = jsonInt(element, key, v);
                case "devcore" -> devcore = jsonInt(element, key, v);
                case "numa" -> numa = jsonInt(element, key, v);
                case "health" -> health = jsonBoolean(element, key, v);
                default -> {
                    // devicepairscore (v2.9), devicevendor, migtemplate, custominfo: not ours
                }
            }
        }
        try {
            return new GpuDevice(id, index, count, devmem, devcore, type, numa, mode, health);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("device list: element " + element + ": " + e.getMessage(), e);
        }
    }

    private static String jsonString(int element, String key, JsonValue v) {
        if (!v.isString()) {
            throw fieldError(element, key, v, "a string");
        }
        return v.stringValue();
    }

    private static int jsonInt(int element, String key, JsonValue v) {
        if (!v.isInt()) {
            throw fieldError(element, key, v, "an integer that fits in 32 bits");
        }
        return v.intValue();
    }

    private static boolean jsonBoolean(int element, String key, JsonValue v) {
        if (!v.isBoolean()) {
            throw fieldError(element, key, v, "true or false");
        }
        return v.booleanValue();
    }

    private static IllegalArgumentException fieldError(int element, String key, JsonValue v, String expected) {
        return new IllegalArgumentException(
                "device list: element " + element + ": " + key + ": " + v + " (expected: " + expected + ")");
    }

    /**
     * Reads the legacy text: devices separated by {@code :}, fields
     * {@code id,count,devmem,devcore,type,numa,health[,index,mode]}; pieces without a comma
     * (the empty piece after the trailing {@code :}) are skipped, as HAMi does.
     */
    public static List<GpuDevice> decodeLegacy(String value) {
        Annotations.checkSize(Annotations.NODE_NVIDIA_REGISTER, value);
        if (value.indexOf(':') < 0) {
            throw new IllegalArgumentException("device list: " + abbreviate(value)
                    + " (expected: a JSON array or legacy text id,count,devmem,devcore,type,numa,health[,index,mode]:…)");
        }
        List<GpuDevice> devices = new ArrayList<>();
        String[] entries = value.split(":", -1);
        for (int e = 0; e < entries.length; e++) {
            String entry = entries[e];
            if (entry.indexOf(',') < 0) {
                continue;
            }
            String[] f = entry.split(",", -1);
            if (f.length != 7 && f.length != 9) {
                throw new IllegalArgumentException("device list: legacy entry " + e + ": " + abbreviate(entry)
                        + " has " + f.length + " fields (expected: 7 or 9)");
            }
            int index = f.length == 9 ? legacyInt(e, "index", f[7]) : 0;
            String mode = f.length == 9 ? f[8] : GpuDevice.MODE_HAMI_CORE;
            try {
                devices.add(new GpuDevice(f[0], index, legacyInt(e, "count", f[1]), legacyInt(e, "devmem", f[2]),
                        legacyInt(e, "devcore", f[3]), f[4], legacyInt(e, "numa", f[5]), mode,
                        legacyBoolean(e, f[6])));
            } catch (IllegalArgumentException ex) {
                if (ex.getMessage().startsWith("device list:")) {
                    throw ex;
                }
                throw new IllegalArgumentException("device list: legacy entry " + e + ": " + ex.getMessage(), ex);
            }
        }
        return List.copyOf(devices);
    }

    private static int legacyInt(int entry, String field, String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("device list: legacy entry " + entry + ": " + field + ": '"
                    + abbreviate(text) + "' (expected: a decimal integer)", e);
        }
    }

    /** Go's {@code strconv.ParseBool} accepts exactly these spellings. */
    private static boolean legacyBoolean(int entry, String text) {
        return switch (text) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            case "0", "f", "F", "FALSE", "false", "False" -> false;
            default -> throw new IllegalArgumentException("device list: legacy entry " + entry + ": health: '"
                    + abbreviate(text) + "' (expected: true or false)");
        };
    }

    /** At most 80 characters of {@code text}, escaped as Go's {@code %q} without the quotes. */
    private static String abbreviate(String text) {
        String quoted = GoStrconv.quote(text.length() <= 80 ? text : text.substring(0, 77) + "...");
        return quoted.substring(1, quoted.length() - 1);
    }
}
