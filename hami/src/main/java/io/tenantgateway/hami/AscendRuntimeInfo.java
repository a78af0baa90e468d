package io.tenantgateway.hami;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.GoJson.Field;
import io.tenantgateway.hami.GoJson.GoType;
import io.tenantgateway.hami.GoJson.Struct;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One element of the pod annotation {@code huawei.com/<commonWord>} that HAMi's scheduler writes at Filter for an
 * Ascend chip and the Ascend device plugin reads in Allocate (device-plugin/VENDOR-PLUGINS.md §2.5, §5.4): Go's
 * {@code RuntimeInfo {UUID, temp, memory, core}}, each {@code omitempty}. The plugin reads {@code memory} and
 * {@code core} into pointers, so "present" is what counts there: a field the JSON leaves out is {@code null} here.
 *
 * @param uuid   {@code UUID}: the chip, {@code ""} when absent
 * @param temp   {@code temp}: the vNPU template name ({@code vir05_1c_8g}), {@code ""} when absent (a whole chip or
 *               hami-core mode)
 * @param memory {@code memory}, MiB; {@code null} when absent
 * @param core   {@code core}; {@code null} when absent
 */
public record AscendRuntimeInfo(String uuid, String temp, Long memory, Long core) {
    private static final Struct RUNTIME_INFO = new Struct("server.RuntimeInfo", List.of(
            new Field("UUID", GoType.STRING, true), new Field("temp", GoType.STRING, true),
            new Field("memory", GoType.INT64, true), new Field("core", GoType.INT32, true)));
    private static final String SLICE = "[]server.RuntimeInfo";

    public AscendRuntimeInfo {
        requireNonNull(uuid, "uuid");
        requireNonNull(temp, "temp");
    }

    /** The annotation key for one chip: {@code huawei.com/<commonWord>}. */
    public static String annotationKey(String commonWord) {
        return "huawei.com/" + requireNonNull(commonWord, "commonWord");
    }

    /**
     * Decodes the annotation value as Go's {@code json.Unmarshal} into {@code []RuntimeInfo} does (keys matched
     * case-insensitively, unknown keys ignored, {@code null} elements skipped).
     *
     * @throws IllegalArgumentException with Go's error text
     */
    public static List<AscendRuntimeInfo> decode(String value) {
        requireNonNull(value, "value");
        Annotations.checkSize("runtime info", value);
        List<AscendRuntimeInfo> out = new ArrayList<>();
        for (Map<String, Object> element : GoJson.decodeList(GoJson.parse(value), RUNTIME_INFO, SLICE)) {
            if (element == null) {
                continue;
            }
            out.add(new AscendRuntimeInfo((String) element.getOrDefault("UUID", ""),
                    (String) element.getOrDefault("temp", ""), (Long) element.get("memory"),
                    (Long) element.get("core")));
        }
        return List.copyOf(out);
    }

    /** Go's lookup by UUID: elements without a UUID are left out, the last of a duplicate wins. */
    public static Map<String, AscendRuntimeInfo> lookup(List<AscendRuntimeInfo> infos) {
        Map<String, AscendRuntimeInfo> lookup = new LinkedHashMap<>();
        for (AscendRuntimeInfo info : infos) {
            if (!info.uuid().isEmpty()) {
                lookup.put(info.uuid(), info);
            }
        }
        return lookup;
    }

    /** The value as HAMi's scheduler writes it: {@code [{"UUID":"…","temp":"…","memory":8192}]}, zero fields left out. */
    public static String encode(List<AscendRuntimeInfo> infos) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < infos.size(); i++) {
            AscendRuntimeInfo info = infos.get(i);
            Map<String, Object> values = new LinkedHashMap<>();
            values.put("UUID", info.uuid());
            values.put("temp", info.temp());
            values.put("memory", info.memory() == null ? 0L : info.memory());
            values.put("core", info.core() == null ? 0L : info.core());
            if (i > 0) {
                out.append(',');
            }
            GoJson.writeStruct(RUNTIME_INFO, values, out);
        }
        return out.append(']').toString();
    }
}
