package io.tenantgateway.agent.k8s;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.hami.Annotations;
import java.util.Map;

/**
 * JSON merge patches (RFC 7386) on {@code metadata}, written by hand so the exact bytes are known:
 * HAMi sends {@code {"metadata":{"annotations":{…},"resourceVersion":"…"}}}, and the
 * {@code resourceVersion} turns the patch into a compare-and-swap (409 when the object changed).
 *
 * <p>A {@code null} annotation value deletes the key on a real API server. fabric8's CRUD mock
 * server stores a JSON null instead, so readers treat a null value as absent ({@link Annotations#get}).
 */
public final class MergePatch {
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
        StringBuilder json = new StringBuilder("{\"metadata\":{");
        boolean first = true;
        if (!annotations.isEmpty()) {
            json.append("\"annotations\":");
            appendObject(json, annotations);
            first = false;
        }
        if (!labels.isEmpty()) {
            json.append(first ? "" : ",").append("\"labels\":");
            appendObject(json, labels);
            first = false;
        }
        if (resourceVersion != null) {
            json.append(first ? "" : ",").append("\"resourceVersion\":").append(quote(resourceVersion));
        }
        return json.append("}}").toString();
    }

    /** A compare-and-swap patch of annotations only. */
    public static String annotations(String resourceVersion, Map<String, String> annotations) {
        requireNonNull(resourceVersion, "resourceVersion");
        return metadata(resourceVersion, annotations, Map.of());
    }

    private static void appendObject(StringBuilder json, Map<String, String> values) {
        json.append('{');
        boolean first = true;
        for (Map.Entry<String, String> entry : values.entrySet()) {
            json.append(first ? "" : ",").append(quote(entry.getKey())).append(':')
                    .append(entry.getValue() == null ? "null" : quote(entry.getValue()));
            first = false;
        }
        json.append('}');
    }

    /** A JSON string literal (RFC 8259 escaping). */
    public static String quote(String value) {
        requireNonNull(value, "value");
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }
}
