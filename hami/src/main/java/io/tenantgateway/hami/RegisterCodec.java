package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GoJson.Field;
import io.tenantgateway.hami.GoJson.GoJsonException;
import io.tenantgateway.hami.GoJson.GoType;
import io.tenantgateway.hami.GoJson.Struct;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every HAMi node register value, both ways, chosen by key through {@link RegisterVendor#TABLE}: the key's
 * {@link RegisterFormat} decides the decoder, as in the scheduler, so JSON vendors reject legacy text (Go's
 * {@code invalid character 'D' looking for beginning of value}) and legacy vendors reject JSON (the legacy decoder's
 * own errors). Decoding never throws for bad values: it returns the scheduler's error text in a {@link Result}.
 *
 * <p><b>Legacy text</b> ({@code id,count,devmem,devcore,type,numa,health,index,mode:} per device, 7-field form:
 * index 0, mode {@code hami-core}). HAMi v2.9's decoder fails only with {@code node annotations not decode
 * successfully} (no {@code :} at all, or a segment with a comma but not 7 or 9 fields); it skips segments without a
 * comma and reads bad numbers as Go's {@code strconv} returns them with the error ignored: 0 for a syntax error, the
 * clamped limit for a range error; a bad health is false. HAMi v2.10's decoder ({@code pkg/device/devices.go
 * DecodeNodeDevices}) fails with, in this order of checks: {@code node annotation missing device separator}; per
 * non-empty segment {@code malformed node annotation segment: "<segment>"} (Go {@code %q}); {@code unexpected field
 * count <n> in node annotation}; {@code invalid count field: }, {@code invalid memory field: }, {@code invalid core
 * field: } (each {@code strconv.ParseInt(s, 10, 32)}, e.g. {@code strconv.ParseInt: parsing "x": invalid syntax},
 * {@code strconv.ParseInt: parsing "3000000000": value out of range}), {@code invalid health field: }
 * ({@code strconv.ParseBool: parsing "yes": invalid syntax}), {@code invalid numa field: } ({@code strconv.Atoi:
 * parsing "x": invalid syntax}), {@code invalid index field: } (Atoi) and {@code index field must not be negative:
 * <n>}. Written the same by both releases ({@code EncodeNodeDevices}): all nine fields, {@code health} as
 * {@code true}/{@code false}, each device followed by {@code :}.
 *
 * <p><b>JSON</b> ({@code []*device.DeviceInfo}): read with Go's rules and errors (see {@link GoJson});
 * {@code devicepairscore} and other unknown keys ignored; {@code null} leaves the zero value; a {@code null} element
 * is refused with our own message (both schedulers crash on it). Written with keys {@code id, index, count, devmem,
 * devcore, type, numa, mode, health, devicevendor, custominfo}, each omitted when zero/false/empty, custominfo's keys
 * sorted (Go map order); v2.9 appends {@code "devicepairscore":{}} to every device.
 *
 * <p><b>Metax sGPU</b>: JSON list of {@code uuid, bdf, model, totalDevCount, totalCompute, totalVRam,
 * availableDevCount, availableCompute, availableVRam, numa, healthy, qosPolicy, linkZone} (uuid always written, the
 * rest omitted when zero); read as id = uuid, index = position, count = totalDevCount, devmem = totalVRam, devcore =
 * totalCompute, numa, health = healthy. The Go type names in its type errors ({@code metax.MetaxSDeviceInfo}) are
 * our guess.
 *
 * <p><b>Enflame DRS</b>: {@code {"devices":[{"index","minor","capacity"}],"profiles":{name:id}}}; read as HAMi's
 * Enflame backend does: {@code annotation not found enflame.com/gcu-drs-capacity}, {@code failed to parse
 * enflame.com/gcu-drs-capacity: <json error>}, {@code no valid drs profiles found on node <node>} (no profile named
 * {@code <slices>g.<GB>gb}), {@code invalid drs capacity on node <node>} (capacity not a positive integer, as a
 * number or a decimal string), {@code no drs devices found on node <node>}; device id
 * {@code <node>-enflame-drs-<index>} (index: Atoi of the device's index, else its position), count = capacity,
 * devmem = largest profile GB × 1024, devcore 100, type and devicevendor {@code Enflame}, health true, custominfo
 * {@code minor} (the index when blank), {@code index}, {@code profiles}, {@code maxSlice}.
 *
 * <p>Vastai and Biren devices read with devcore 100, as the scheduler sets it after reading ("only for calscore
 * use"), whatever the value says.
 *
 * <p>Pure: no I/O, no state; safe from any thread.
 */
public final class RegisterCodec {
    private static final Struct DEVICE_INFO = new Struct("device.DeviceInfo", List.of(
            new Field("id", GoType.STRING, true), new Field("index", GoType.UINT, true),
            new Field("count", GoType.INT32, true), new Field("devmem", GoType.INT32, true),
            new Field("devcore", GoType.INT32, true), new Field("type", GoType.STRING, true),
            new Field("numa", GoType.INT, true), new Field("mode", GoType.STRING, true),
            new Field("health", GoType.BOOL, true), new Field("devicevendor", GoType.STRING, true),
            new Field("custominfo", GoType.ANY_MAP, true)));
    private static final String DEVICE_SLICE = "[]*device.DeviceInfo";
    private static final Struct METAX = new Struct("metax.MetaxSDeviceInfo", List.of(
            new Field("uuid", GoType.STRING, false), new Field("bdf", GoType.STRING, true),
            new Field("model", GoType.STRING, true), new Field("totalDevCount", GoType.INT32, true),
            new Field("totalCompute", GoType.INT32, true), new Field("totalVRam", GoType.INT32, true),
            new Field("availableDevCount", GoType.INT32, true), new Field("availableCompute", GoType.INT32, true),
            new Field("availableVRam", GoType.INT32, true), new Field("numa", GoType.INT32, true),
            new Field("healthy", GoType.BOOL, true), new Field("qosPolicy", GoType.STRING, true),
            new Field("linkZone", GoType.INT32, true)));
    private static final String METAX_SLICE = "[]*metax.MetaxSDeviceInfo";
    private static final String METAX_SGPU_TYPE = "Metax-SGPU";
    private static final Struct DRS = new Struct("enflame.drsCapacitySpec", List.of(
            new Field("devices", GoType.ANY, false), new Field("profiles", GoType.STRING_MAP, false)));
    private static final Struct DRS_DEVICE = new Struct("enflame.drsDeviceSpec", List.of(
            new Field("index", GoType.STRING, false), new Field("minor", GoType.STRING, false),
            new Field("capacity", GoType.ANY, false)));
    private static final Pattern DRS_PROFILE = Pattern.compile("(\\d+)g\\.(\\d+)gb");
    private static final String DRS_KEY = "enflame.com/gcu-drs-capacity";
    /** The most devices {@link #fromCapacity} derives for one vendor. */
    public static final int MAX_DERIVED_DEVICES = 1024;
    /** The most devices {@link #encode} writes into one value (no node has that many; each is one object). */
    public static final int MAX_ENCODED_DEVICES = 1024;

    private RegisterCodec() {
    }

    /** A decoded value: the devices, or HAMi's reader message. */
    public record Result(List<RegisteredDevice> devices, String error) {
        public Result {
            devices = devices == null ? null : List.copyOf(devices);
        }

        static Result ok(List<RegisteredDevice> devices) {
            return new Result(devices, null);
        }

        static Result failed(String error) {
            return new Result(null, requireNonNull(error, "error"));
        }

        public boolean isOk() {
            return error == null;
        }
    }

    /** The table row for {@code key}, or an exception naming the key. */
    public static RegisterVendor vendor(String key) {
        return RegisterVendor.forKey(key).orElseThrow(() -> new IllegalArgumentException(
                key + " (expected: a HAMi node register key such as hami.io/node-nvidia-register, "
                        + "hami.io/node-dcu-register, hami.io/node-register-<chip>, metax-tech.com/node-gpu-devices, "
                        + "enflame.com/gcu-drs-capacity)"));
    }

    /**
     * Decodes {@code value} of {@code key} (null: the node lacks the key) as {@code release}'s scheduler does.
     *
     * @param node the node's name (in Enflame's device ids and messages)
     * @throws IllegalArgumentException only when {@code key} is not a register key
     */
    public static Result decode(String key, String value, HamiRelease release, String node) {
        RegisterVendor vendor = vendor(key);
        requireNonNull(release, "release");
        requireNonNull(node, "node");
        if (value == null) {
            return Result.failed(vendor.missing(key));
        }
        if (Annotations.exceedsSizeLimit(value)) {
            return Result.failed(Annotations.sizeLimitMessage(key, value));
        }
        List<RegisteredDevice> devices;
        try {
            devices = switch (vendor.format()) {
                case JSON -> jsonDevices(value);
                case LEGACY_TEXT -> release == HamiRelease.V2_9 ? legacyV29(value) : legacyV210(value);
                case METAX_SGPU -> metaxDevices(value);
                case ENFLAME_DRS -> drsDevices(value, node);
            };
        } catch (GoJsonException e) {
            return Result.failed(e.getMessage());
        }
        if (devices.isEmpty()) {
            return Result.failed(vendor.empty(node));
        }
        String commonWord = vendor.commonWord(key);
        boolean wholeCore = vendor.wholeCoreOnRead();
        devices = devices.stream().map(d -> new RegisteredDevice(d.id(), d.index(), d.count(), d.devmem(),
                wholeCore ? 100 : d.devcore(), d.type(), d.numa(), d.mode(), d.health(), commonWord,
                d.custominfo())).toList();
        return Result.ok(devices);
    }

    // ---- JSON ----

    private static List<RegisteredDevice> jsonDevices(String value) {
        List<RegisteredDevice> devices = new ArrayList<>();
        List<Map<String, Object>> list = GoJson.decodeList(GoJson.parse(value), DEVICE_INFO, DEVICE_SLICE);
        for (int i = 0; i < list.size(); i++) {
            Map<String, Object> v = list.get(i);
            if (v == null) {
                throw new GoJsonException("element " + i + " is null (a nil device: both HAMi schedulers crash on it)");
            }
            devices.add(new RegisteredDevice(str(v, "id"), num(v, "index"), (int) num(v, "count"),
                    (int) num(v, "devmem"), (int) num(v, "devcore"), str(v, "type"), (int) num(v, "numa"),
                    str(v, "mode"), Boolean.TRUE.equals(v.get("health")), str(v, "devicevendor"), map(v)));
        }
        return devices;
    }

    private static String str(Map<String, Object> v, String key) {
        Object o = v.get(key);
        return o == null ? "" : (String) o;
    }

    private static long num(Map<String, Object> v, String key) {
        Object o = v.get(key);
        return o == null ? 0 : (Long) o;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<String, Object> v) {
        Object o = v.get("custominfo");
        return o == null ? Map.of() : (Map<String, Object>) o;
    }

    /** The JSON register value exactly as {@code release}'s writers write it. */
    public static String encodeJson(List<RegisteredDevice> devices, HamiRelease release) {
        StringBuilder out = new StringBuilder(64 + devices.size() * 160).append('[');
        for (int i = 0; i < devices.size(); i++) {
            RegisteredDevice d = requireNonNull(devices.get(i), "devices[" + i + "]");
            if (i > 0) {
                out.append(',');
            }
            Map<String, Object> values = new LinkedHashMap<>();
            values.put("id", d.id());
            values.put("index", d.index());
            values.put("count", (long) d.count());
            values.put("devmem", (long) d.devmem());
            values.put("devcore", (long) d.devcore());
            values.put("type", d.type());
            values.put("numa", (long) d.numa());
            values.put("mode", d.mode());
            values.put("health", d.health());
            values.put("devicevendor", d.devicevendor());
            values.put("custominfo", d.custominfo());
            GoJson.writeStruct(DEVICE_INFO, values, out);
            if (release == HamiRelease.V2_9) {
                out.setLength(out.length() - 1);
                out.append(out.charAt(out.length() - 1) == '{' ? "" : ",").append("\"devicepairscore\":{}}");
            }
        }
        return out.append(']').toString();
    }

    // ---- legacy text ----

    /**
     * The legacy text exactly as HAMi's {@code EncodeNodeDevices} writes it (both releases). Unlike HAMi it refuses
     * a text field holding {@code ,} or {@code :}: written as it is, an id {@code GPU-a,1,999999,100,T,0,true,0,x:G}
     * would read back as a forged extra device.
     *
     * @throws IllegalArgumentException naming the device, the field and the character
     */
    public static String encodeLegacy(List<RegisteredDevice> devices) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < devices.size(); i++) {
            RegisteredDevice d = devices.get(i);
            requireNoSeparator(i, "id", d.id());
            requireNoSeparator(i, "type", d.type());
            requireNoSeparator(i, "mode", d.mode());
            out.append(d.id()).append(',').append(d.count()).append(',').append(d.devmem()).append(',')
                    .append(d.devcore()).append(',').append(d.type()).append(',').append(d.numa()).append(',')
                    .append(d.health()).append(',').append(d.index()).append(',').append(d.mode()).append(':');
        }
        return out.toString();
    }

    private static void requireNoSeparator(int device, String field, String value) {
        for (char separator : new char[] {',', ':'}) {
            if (value.indexOf(separator) >= 0) {
                throw new IllegalArgumentException("device " + device + ": " + field + " "
                        + GoStrconv.quoteAbbreviated(value, 200) + " contains '" + separator + "' (expected: no ','"
                        + " or ':' in a legacy-format field: they separate the fields and the devices)");
            }
        }
    }

    private static List<RegisteredDevice> legacyV29(String value) {
        String failed = "node annotations not decode successfully";
        if (value.indexOf(':') < 0) {
            throw new GoJsonException(failed);
        }
        List<RegisteredDevice> devices = new ArrayList<>();
        for (String segment : value.split(":", -1)) {
            if (segment.indexOf(',') < 0) {
                continue;
            }
            String[] f = segment.split(",", -1);
            if (f.length != 7 && f.length != 9) {
                throw new GoJsonException(failed);
            }
            long index = f.length == 9 ? GoStrconv.atoi(f[7]).value() : 0;
            String mode = f.length == 9 ? f[8] : GpuDevice.MODE_HAMI_CORE;
            devices.add(RegisteredDevice.of(f[0], index, (int) GoStrconv.parseInt(f[1], 32).value(),
                    (int) GoStrconv.parseInt(f[2], 32).value(), (int) GoStrconv.parseInt(f[3], 32).value(), f[4],
                    (int) GoStrconv.atoi(f[5]).value(), mode, GoStrconv.parseBool(f[6]).value() == 1));
        }
        return devices;
    }

    private static List<RegisteredDevice> legacyV210(String value) {
        if (value.indexOf(':') < 0) {
            throw new GoJsonException("node annotation missing device separator");
        }
        List<RegisteredDevice> devices = new ArrayList<>();
        for (String segment : value.split(":", -1)) {
            if (segment.isEmpty()) {
                continue;
            }
            if (segment.indexOf(',') < 0) {
                throw new GoJsonException("malformed node annotation segment: " + GoStrconv.quote(segment));
            }
            String[] f = segment.split(",", -1);
            if (f.length != 7 && f.length != 9) {
                throw new GoJsonException("unexpected field count " + f.length + " in node annotation");
            }
            long count = strict("count", GoStrconv.parseInt(f[1], 32));
            long memory = strict("memory", GoStrconv.parseInt(f[2], 32));
            long core = strict("core", GoStrconv.parseInt(f[3], 32));
            boolean health = strict("health", GoStrconv.parseBool(f[6])) == 1;
            long numa = strict("numa", GoStrconv.atoi(f[5]));
            long index = 0;
            String mode = GpuDevice.MODE_HAMI_CORE;
            if (f.length == 9) {
                index = strict("index", GoStrconv.atoi(f[7]));
                if (index < 0) {
                    throw new GoJsonException("index field must not be negative: " + index);
                }
                mode = f[8];
            }
            devices.add(RegisteredDevice.of(f[0], index, (int) count, (int) memory, (int) core, f[4], (int) numa,
                    mode, health));
        }
        return devices;
    }

    private static long strict(String field, GoStrconv.Parsed parsed) {
        if (!parsed.ok()) {
            throw new GoJsonException("invalid " + field + " field: " + parsed.error());
        }
        return parsed.value();
    }

    // ---- Metax sGPU ----

    private static List<RegisteredDevice> metaxDevices(String value) {
        List<Map<String, Object>> list = GoJson.decodeList(GoJson.parse(value), METAX, METAX_SLICE);
        List<RegisteredDevice> devices = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            Map<String, Object> v = list.get(i);
            if (v == null) {
                throw new GoJsonException("element " + i + " is null (a nil device)");
            }
            Map<String, Object> custom = new LinkedHashMap<>();
            custom.put("Model", str(v, "model"));
            custom.put("QosPolicy", str(v, "qosPolicy"));
            custom.put("LinkZone", num(v, "linkZone"));
            devices.add(new RegisteredDevice(str(v, "uuid"), i, (int) num(v, "totalDevCount"),
                    (int) num(v, "totalVRam"), (int) num(v, "totalCompute"), METAX_SGPU_TYPE, (int) num(v, "numa"), "",
                    Boolean.TRUE.equals(v.get("healthy")), METAX_SGPU_TYPE, custom));
        }
        return devices;
    }

    // ---- Enflame DRS ----

    @SuppressWarnings("unchecked")
    private static List<RegisteredDevice> drsDevices(String value, String node) {
        Map<String, Object> spec;
        List<Map<String, Object>> specDevices = new ArrayList<>();
        try {
            spec = drsSpec(value, specDevices);
        } catch (GoJsonException e) {
            throw new GoJsonException("failed to parse " + DRS_KEY + ": " + e.getMessage());
        }
        Map<String, Object> profiles = spec.get("profiles") == null ? Map.of()
                : (Map<String, Object>) spec.get("profiles");
        long maxSlice = 0;
        long maxMemGb = 0;
        for (String name : profiles.keySet()) {
            Matcher m = DRS_PROFILE.matcher(name);
            if (m.matches()) {
                maxSlice = Math.max(maxSlice, GoStrconv.atoi(m.group(1)).value());
                maxMemGb = Math.max(maxMemGb, GoStrconv.atoi(m.group(2)).value());
            }
        }
        if (maxSlice <= 0) {
            throw new GoJsonException("no valid drs profiles found on node " + node);
        }
        if (maxMemGb <= 0) {
            maxMemGb = maxSlice;
        }
        List<RegisteredDevice> devices = new ArrayList<>();
        for (int idx = 0; idx < specDevices.size(); idx++) {
            Map<String, Object> d = specDevices.get(idx);
            GoStrconv.Parsed parsedIndex = GoStrconv.atoi(str(d, "index"));
            long devIndex = parsedIndex.ok() ? parsedIndex.value() : idx;
            long capacity = drsCapacity(d.get("capacity"));
            if (capacity <= 0) {
                throw new GoJsonException("invalid drs capacity on node " + node);
            }
            String minor = str(d, "minor").strip();
            if (minor.isEmpty()) {
                minor = Long.toString(devIndex);
            }
            Map<String, Object> custom = new LinkedHashMap<>();
            custom.put("minor", minor);
            custom.put("index", Long.toString(devIndex));
            custom.put("profiles", new TreeMap<>(profiles));
            custom.put("maxSlice", maxSlice);
            devices.add(new RegisteredDevice(node + "-enflame-drs-" + devIndex, devIndex, (int) capacity,
                    (int) (maxMemGb * 1024), 100, "Enflame", 0, "", true, "Enflame", custom));
        }
        return devices;
    }

    private static Map<String, Object> drsSpec(String value, List<Map<String, Object>> devicesOut) {
        JsonValue root = GoJson.parse(value);
        if (root.isNull()) {
            return Map.of();
        }
        if (!root.isObject()) {
            throw new GoJsonException("json: cannot unmarshal " + GoJson.kind(root)
                    + " into Go value of type enflame.drsCapacitySpec");
        }
        Map<String, Object> spec = new LinkedHashMap<>();
        for (Map.Entry<String, JsonValue> member : root.members()) {
            Field field = DRS.field(member.getKey());
            if (field == null) {
                continue;
            }
            JsonValue v = member.getValue();
            if (field.name().equals("devices")) {
                devicesOut.clear();
                if (v.isNull()) {
                    spec.remove("devices");
                    continue;
                }
                if (!v.isArray()) {
                    throw new GoJsonException("json: cannot unmarshal " + GoJson.kind(v)
                            + " into Go struct field drsCapacitySpec.devices of type []enflame.drsDeviceSpec");
                }
                List<Object> raw = new ArrayList<>();
                for (JsonValue e : v.elements()) {
                    if (!e.isNull() && !e.isObject()) {
                        throw new GoJsonException("json: cannot unmarshal " + GoJson.kind(e)
                                + " into Go struct field drsCapacitySpec.devices of type enflame.drsDeviceSpec");
                    }
                    Map<String, Object> d = e.isNull() ? new LinkedHashMap<>()
                            : GoJson.decodeStruct(e, DRS_DEVICE, "drsCapacitySpec.devices");
                    devicesOut.add(d);
                    raw.add(d);
                }
                spec.put("devices", raw);
            } else if (v.isNull()) {
                spec.remove("profiles");
            } else {
                spec.put("profiles", GoJson.value(v, GoType.STRING_MAP, "drsCapacitySpec.profiles"));
            }
        }
        return spec;
    }

    /** HAMi's {@code parseDRSCapacity}: an integral number, or a string holding a decimal integer; else 0. */
    private static long drsCapacity(Object capacity) {
        if (capacity instanceof Long l) {
            return l;
        }
        if (capacity instanceof String s) {
            GoStrconv.Parsed p = GoStrconv.atoi(s.strip());
            return p.ok() ? p.value() : 0;
        }
        return 0;
    }

    // ---- encoding from the command's input ----

    /**
     * The value for {@code key} exactly as {@code release}'s writer writes it, from {@code input}: for JSON and
     * legacy-text keys a JSON list of devices with the register JSON keys; for Metax sGPU a list of Metax device
     * objects; for Enflame DRS the DRS object.
     *
     * @throws IllegalArgumentException when {@code key} is not a register key or {@code input} cannot be read
     */
    @SuppressWarnings("unchecked")
    public static String encode(String key, String input, HamiRelease release) {
        RegisterVendor vendor = vendor(key);
        requireNonNull(input, "input");
        requireNonNull(release, "release");
        switch (vendor.format()) {
            case JSON, LEGACY_TEXT -> {
                List<RegisteredDevice> devices = jsonDevices(requireEncodable(input));
                return vendor.format() == RegisterFormat.JSON ? encodeJson(devices, release) : encodeLegacy(devices);
            }
            case METAX_SGPU -> {
                List<Map<String, Object>> list = GoJson.decodeList(GoJson.parse(requireEncodable(input)), METAX,
                        METAX_SLICE);
                StringBuilder out = new StringBuilder("[");
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    if (list.get(i) == null) {
                        out.append("null");
                    } else {
                        GoJson.writeStruct(METAX, list.get(i), out);
                    }
                }
                return out.append(']').toString();
            }
            default -> {
                List<Map<String, Object>> devices = new ArrayList<>();
                Map<String, Object> spec = drsSpec(requireEncodable(input), devices);
                StringBuilder out = new StringBuilder("{\"devices\":");
                if (spec.get("devices") == null) {
                    out.append("null");
                } else {
                    out.append('[');
                    for (int i = 0; i < devices.size(); i++) {
                        if (i > 0) {
                            out.append(',');
                        }
                        GoJson.writeStruct(DRS_DEVICE, devices.get(i), out);
                    }
                    out.append(']');
                }
                out.append(",\"profiles\":");
                GoJson.writeAny(spec.get("profiles"), out);
                return out.append('}').toString();
            }
        }
    }

    /**
     * {@code input}, when no JSON array in it has more than {@link #MAX_ENCODED_DEVICES} elements (a device list;
     * the DRS object's {@code devices}). Counted by scanning the text, before anything is parsed: a parsed tree of a
     * few MiB of tiny devices takes tens of MiB of heap.
     */
    private static String requireEncodable(String input) {
        int[] elements = new int[64]; // per open array, by depth; deeper arrays are not counted (the parser decides)
        boolean[] empty = new boolean[64];
        int depth = 0;
        int largest = 0;
        boolean inString = false;
        for (int i = 0; i < input.length(); i++) {
            char c = input.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
                continue;
            }
            switch (c) {
                case '"' -> {
                    inString = true;
                    if (depth > 0 && depth <= elements.length) {
                        empty[depth - 1] = false;
                    }
                }
                case '[', '{' -> {
                    if (depth > 0 && depth <= elements.length && empty[depth - 1]) {
                        empty[depth - 1] = false; // a nested value is the enclosing array's element
                    }
                    depth++;
                    if (depth <= elements.length) {
                        elements[depth - 1] = c == '[' ? 0 : -1;
                        empty[depth - 1] = c == '[';
                    }
                }
                case ']', '}' -> {
                    if (depth > 0 && depth <= elements.length && elements[depth - 1] >= 0) {
                        largest = Math.max(largest, elements[depth - 1] + (empty[depth - 1] ? 0 : 1));
                    }
                    depth = Math.max(0, depth - 1);
                }
                case ',' -> {
                    if (depth > 0 && depth <= elements.length && elements[depth - 1] >= 0) {
                        elements[depth - 1]++;
                    }
                }
                default -> {
                    if (depth > 0 && depth <= elements.length && empty[depth - 1] && !Character.isWhitespace(c)) {
                        empty[depth - 1] = false;
                    }
                }
            }
            if (largest > MAX_ENCODED_DEVICES) {
                throw new IllegalArgumentException("more than " + MAX_ENCODED_DEVICES + " devices (expected: at most "
                        + MAX_ENCODED_DEVICES + " in one register value)");
            }
        }
        return input;
    }

    // ---- a node's registrations ----

    /**
     * Every registration a node carries, as {@code release}'s scheduler reads it: each register annotation among
     * {@code annotations} (in their order), then the devices derived from {@code capacity} ({@link #fromCapacity}).
     * Keys: the annotation key, or the capacity vendor's count resource.
     *
     * @param labels the node's labels (AWS Neuron devices carry its instance type)
     */
    public static Map<String, Result> decodeNode(Map<String, String> annotations, Map<String, String> capacity,
                                                 Map<String, String> labels, HamiRelease release, String node) {
        Map<String, Result> out = new LinkedHashMap<>();
        decodeNode(annotations, capacity, labels, release, node, out::put);
        return out;
    }

    /** {@link #decodeNode(Map, Map, Map, HamiRelease, String)} of a node without labels. */
    public static Map<String, Result> decodeNode(Map<String, String> annotations, Map<String, String> capacity,
                                                 HamiRelease release, String node) {
        return decodeNode(annotations, capacity, Map.of(), release, node);
    }

    /**
     * {@link #decodeNode(Map, Map, Map, HamiRelease, String)}, each result handed to {@code each} as soon as it is
     * decoded: a caller that keeps only a bounded summary never holds more than one value's devices.
     */
    public static void decodeNode(Map<String, String> annotations, Map<String, String> capacity,
                                  Map<String, String> labels, HamiRelease release, String node,
                                  BiConsumer<String, Result> each) {
        requireNonNull(each, "each");
        annotations.forEach((key, value) -> {
            if (RegisterVendor.forKey(key).isPresent()) {
                each.accept(key, decode(key, value, release, node));
            }
        });
        fromCapacity(capacity, labels, release, node).forEach(each);
    }

    /**
     * The backend a registration key belongs to: the {@link RegisterVendor} of a register annotation key, the
     * {@link CapacityVendor} of a count resource, else empty.
     */
    public static Optional<String> vendorOf(String key) {
        return RegisterVendor.forKey(key).map(RegisterVendor::vendor).or(() -> CapacityVendor.TABLE.stream()
                .filter(v -> v.countResource().equals(key)).findFirst().map(CapacityVendor::vendor));
    }

    // ---- capacity-derived devices ----

    /** {@link #fromCapacity(Map, Map, HamiRelease, String)} of a node without labels. */
    public static Map<String, Result> fromCapacity(Map<String, String> capacity, HamiRelease release, String node) {
        return fromCapacity(capacity, Map.of(), release, node);
    }

    /**
     * The devices {@code release}'s scheduler derives from node capacity, per vendor of {@link CapacityVendor#TABLE}
     * that {@code release} has and whose count resource the node has (key: {@link CapacityVendor#countResource()}),
     * built as that vendor's {@code GetNodeDevices} builds them (see {@link CapacityVendor}). Capacity values must be
     * plain integers (extended resources are); another value gives an error result naming it. A zero count is
     * {@code device not found <resource>} for the vendors whose scheduler says so. A capacity that gives more than
     * {@value #MAX_DERIVED_DEVICES} devices (or AWS Neuron cores per device) gives an error result instead (no node
     * has that many; the devices are built one object each).
     *
     * @param labels the node's labels ({@value CapacityVendor#INSTANCE_TYPE_LABEL} for AWS Neuron)
     */
    public static Map<String, Result> fromCapacity(Map<String, String> capacity, Map<String, String> labels,
                                                   HamiRelease release, String node) {
        requireNonNull(labels, "labels");
        Map<String, Result> out = new LinkedHashMap<>();
        for (CapacityVendor vendor : CapacityVendor.TABLE) {
            String countText = capacity.get(vendor.countResource());
            if (countText == null || !vendor.releases().contains(release)) {
                continue;
            }
            out.put(vendor.countResource(), derive(vendor, countText, capacity, labels, node));
        }
        return out;
    }

    private static Result derive(CapacityVendor vendor, String countText, Map<String, String> capacity,
                                 Map<String, String> labels, String node) {
        long count = capacityValue(countText);
        if (count < 0) {
            return invalid(vendor.countResource(), countText);
        }
        if (count == 0 && vendor.zeroIsError()) {
            return Result.failed("device not found " + vendor.countResource());
        }
        long n = vendor.rule() == CapacityVendor.Rule.PER_CORE_UNITS
                ? (count + vendor.unitsPerDevice() - 1) / vendor.unitsPerDevice() : count;
        if (n > MAX_DERIVED_DEVICES) {
            return Result.failed("too many devices in capacity " + vendor.countResource() + ": "
                    + GoStrconv.quote(countText) + " gives " + n + " (expected: at most " + MAX_DERIVED_DEVICES + ")");
        }
        int devmem = vendor.devmem();
        int deviceCount = vendor.count();
        int devcore = vendor.devcore();
        Map<String, Object> custom = Map.of();
        switch (vendor.rule()) {
            case PER_CORE_UNITS -> {
                String memoryText = capacity.getOrDefault(vendor.memoryResource(), "0");
                long memory = capacityValue(memoryText);
                if (memory < 0) {
                    return invalid(vendor.memoryResource(), memoryText);
                }
                // Go: int32(memory × factor × units ÷ cores), int64 arithmetic, the conversion keeping 32 bits.
                devmem = count == 0 ? 0 : (int) (memory * vendor.memoryFactorMiB() * vendor.unitsPerDevice() / count);
            }
            case AWS_NEURON -> {
                String coresText = capacity.getOrDefault(vendor.coreResource(), "0");
                long cores = capacityValue(coresText);
                if (cores < 0) {
                    return invalid(vendor.coreResource(), coresText);
                }
                long perDevice = cores / count;
                if (perDevice > MAX_DERIVED_DEVICES) {
                    return Result.failed("too many cores per device in capacity " + vendor.coreResource() + ": "
                            + GoStrconv.quote(coresText) + " over " + count + " devices gives " + perDevice
                            + " (expected: at most " + MAX_DERIVED_DEVICES + ")");
                }
                deviceCount = (int) perDevice;
                // The mask of perDevice cores, kept to 32 bits as Go's int32 conversion keeps it.
                devcore = perDevice >= 32 ? -1 : (int) ((1L << perDevice) - 1);
                custom = Map.of("AWSNodeType", labels.getOrDefault(CapacityVendor.INSTANCE_TYPE_LABEL, ""));
            }
            default -> {
            }
        }
        List<RegisteredDevice> devices = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int numa = vendor.rule() == CapacityVendor.Rule.KUNLUN && i >= count / 2 ? 1 : 0;
            devices.add(new RegisteredDevice(node + "-" + vendor.idWord() + "-" + i, i, deviceCount, devmem, devcore,
                    vendor.type(), numa, "", true, vendor.type(), custom));
        }
        return Result.ok(devices);
    }

    /** A capacity as a non-negative integer, or -1 when it is not one. */
    private static long capacityValue(String text) {
        GoStrconv.Parsed parsed = GoStrconv.atoi(text);
        return parsed.ok() && parsed.value() >= 0 ? parsed.value() : -1;
    }

    private static Result invalid(String resource, String text) {
        return Result.failed("invalid capacity " + resource + ": " + GoStrconv.quote(text)
                + " (expected: a non-negative integer)");
    }
}
