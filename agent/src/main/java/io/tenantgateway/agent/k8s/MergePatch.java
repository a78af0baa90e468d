package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON merge patches (RFC 7386) on {@code metadata}, written with Jackson in a fixed key order so the exact bytes are
 * known: HAMi sends {@code {"metadata":{"annotations":{…},"resourceVersion":"…"}}}, and the {@code resourceVersion}
 * turns the patch into a compare-and-swap (409 when the object changed).
 *
 * <p>A {@code null} annotation value deletes the key on a real API server. fabric8's CRUD mock
 * server stores a JSON null instead, so readers treat a null value as absent ({@link Annotations#get}).
 */
public final class MergePatch {
    /** Jackson's defaults: compact output, nulls written, map order kept. Thread-safe. */
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private MergePatch() {
    }

    /**
     * A patch of {@code metadata.annotations} and {@code metadata.labels}.
     *
     * @param resourceVersion the version the change is based on; {@code null} for an unconditional patch
     * @param annotations keys to set; a {@code null} value deletes the key
     * @param labels labels to set (may be empty); a {@code null} value deletes the label
     */
    public static String metadata(String resourceVersion, Map<String, String> annotations, Map<String, String> labels) {
        requireNonNull(annotations, "annotations");
        requireNonNull(labels, "labels");
        Map<String, Object> metadata = new LinkedHashMap<>();
        if (!annotations.isEmpty()) {
            metadata.put("annotations", annotations);
        }
        if (!labels.isEmpty()) {
            metadata.put("labels", labels);
        }
        if (resourceVersion != null) {
            metadata.put("resourceVersion", resourceVersion);
        }
        return json(Map.of("metadata", metadata));
    }

    /** A compare-and-swap patch of annotations only. */
    public static String annotations(String resourceVersion, Map<String, String> annotations) {
        requireNonNull(resourceVersion, "resourceVersion");
        return metadata(resourceVersion, annotations, Map.of());
    }

    /** Any patch built from maps, lists and strings ({@code null} values are written as JSON null). */
    public static String json(Object patch) {
        return JSON.writeValueAsString(requireNonNull(patch, "patch"));
    }

    /** A JSON string literal (RFC 8259 escaping). */
    public static String quote(String value) {
        return json(requireNonNull(value, "value"));
    }
}
