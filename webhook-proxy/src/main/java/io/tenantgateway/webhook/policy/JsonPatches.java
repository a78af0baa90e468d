package io.tenantgateway.webhook.policy;

import java.util.Iterator;
import java.util.Map;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.JsonNodeType;
import tools.jackson.databind.node.ObjectNode;

/**
 * RFC 6902 patches between two JSON trees, made the way HAMi's webhook makes them: controller-runtime's
 * {@code PatchResponseFromRaw} diffs the original and the mutated pod with gomodules' jsonpatch v2, which
 * <ul>
 *   <li>compares objects key by key: {@code add} for a key only the mutated object has, the same comparison one
 *       level down for a key both have, {@code remove} for a key only the original has;</li>
 *   <li>compares arrays index by index: {@code remove} for the original's surplus entries (last first), {@code add}
 *       for the mutated array's surplus entries, then the same comparison for each common index;</li>
 *   <li>{@code replace}s a value whose JSON type changed or whose scalar value differs (numbers compare as
 *       doubles, as Go's {@code float64}).</li>
 * </ul>
 * Only add, remove and replace; one pass, linear in the size of the two trees (a longest-common-subsequence diff
 * over arrays, as general JSON diff libraries make, holds a table of {@code n × m} cells: 5,000 containers are 25
 * million). Object keys come in the mutated object's order (Go's map order is random, so HAMi's operations come in
 * no fixed order; the set is the same).
 */
public final class JsonPatches {
    private JsonPatches() {
    }

    /** The operations that turn {@code original} into {@code mutated}; an empty array when they are equal. */
    public static ArrayNode diff(JsonNode original, JsonNode mutated) {
        ArrayNode ops = JsonNodeFactory.instance.arrayNode();
        compare(original, mutated, new StringBuilder(), new Sink() {
            @Override
            public void operation(String op, CharSequence path, JsonNode value) {
                ObjectNode node = ops.addObject();
                node.put("op", op);
                node.put("path", path.toString());
                if (value != null) {
                    node.set("value", value.deepCopy());
                }
            }
        });
        return ops;
    }

    /**
     * Writes the patch as a JSON array to {@code out}, operation by operation, without building it as a tree.
     *
     * @return the number of operations written
     */
    public static int write(JsonNode original, JsonNode mutated, JsonGenerator out) {
        int[] count = new int[1];
        out.writeStartArray();
        compare(original, mutated, new StringBuilder(), (op, path, value) -> {
            count[0]++;
            out.writeStartObject();
            out.writeStringProperty("op", op);
            out.writeName("path");
            out.writeString(path.toString());
            if (value != null) {
                out.writeName("value");
                out.writeTree(value);
            }
            out.writeEndObject();
        });
        out.writeEndArray();
        return count[0];
    }

    /** Receives operations in order; {@code path} is only valid during the call. */
    private interface Sink {
        void operation(String op, CharSequence path, JsonNode value);
    }

    private static void compare(JsonNode a, JsonNode b, StringBuilder path, Sink sink) {
        JsonNodeType at = kind(a);
        JsonNodeType bt = kind(b);
        if (at == JsonNodeType.NULL && bt == JsonNodeType.NULL) {
            return;
        }
        if (at != bt) {
            sink.operation("replace", path, b);
            return;
        }
        switch (at) {
            case OBJECT -> compareObjects(a, b, path, sink);
            case ARRAY -> compareArrays(a, b, path, sink);
            case NUMBER -> {
                if (a.doubleValue() != b.doubleValue()) {
                    sink.operation("replace", path, b);
                }
            }
            default -> {
                if (!a.equals(b)) {
                    sink.operation("replace", path, b);
                }
            }
        }
    }

    private static void compareObjects(JsonNode a, JsonNode b, StringBuilder path, Sink sink) {
        int at = path.length();
        for (Iterator<Map.Entry<String, JsonNode>> it = b.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            appendKey(path, entry.getKey());
            JsonNode before = a.get(entry.getKey());
            if (before == null) {
                sink.operation("add", path, entry.getValue());
            } else {
                compare(before, entry.getValue(), path, sink);
            }
            path.setLength(at);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = a.properties().iterator(); it.hasNext(); ) {
            String key = it.next().getKey();
            if (!b.has(key)) {
                appendKey(path, key);
                sink.operation("remove", path, null);
                path.setLength(at);
            }
        }
    }

    private static void compareArrays(JsonNode a, JsonNode b, StringBuilder path, Sink sink) {
        int at = path.length();
        int common = Math.min(a.size(), b.size());
        for (int i = a.size() - 1; i >= common; i--) {
            path.append('/').append(i);
            sink.operation("remove", path, null);
            path.setLength(at);
        }
        for (int i = common; i < b.size(); i++) {
            path.append('/').append(i);
            sink.operation("add", path, b.get(i));
            path.setLength(at);
        }
        for (int i = 0; i < common; i++) {
            path.append('/').append(i);
            compare(a.get(i), b.get(i), path, sink);
            path.setLength(at);
        }
    }

    /** The JSON type as Go's decoder sees it: a missing node is {@code null}, every number one type. */
    private static JsonNodeType kind(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return JsonNodeType.NULL;
        }
        return node.getNodeType();
    }

    /** RFC 6901: {@code ~} as {@code ~0}, {@code /} as {@code ~1}. */
    private static void appendKey(StringBuilder path, String key) {
        path.append('/');
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '~') {
                path.append("~0");
            } else if (c == '/') {
                path.append("~1");
            } else {
                path.append(c);
            }
        }
    }
}
