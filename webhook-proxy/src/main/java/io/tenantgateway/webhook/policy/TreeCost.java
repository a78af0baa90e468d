package io.tenantgateway.webhook.policy;

import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Estimated heap bytes of Jackson trees made by {@link CompactNodes} on a 64-bit JVM with compressed references
 * (any heap under 32 GiB: every agent). Measured against the heap a 10,000-container review's trees really hold:
 * within a few percent (see webhook-proxy/DESIGN.md, "What a decision holds").
 *
 * <p>Sizes: an object node with its {@link java.util.LinkedHashMap} and a 4-slot table, 104 bytes, plus 48 per
 * field (the map entry and its table slot as the table grows); an array node with its list, 56, plus 8 per
 * element; a string node, 16 plus the string (24 and its array, 16 + one byte per Latin-1 character, two
 * otherwise, rounded up to 8); a number node, 24; {@code true}, {@code false} and {@code null} are shared.
 */
public final class TreeCost {
    public static final long OBJECT = 104;
    public static final long FIELD = 48;
    public static final long ARRAY = 56;
    public static final long ELEMENT = 8;
    public static final long VALUE_NODE = 16;
    public static final long NUMBER = 24;

    private TreeCost() {
    }

    /** A {@link String}'s heap: its object and its byte array. */
    public static long string(String text) {
        boolean latin1 = true;
        for (int i = 0; i < text.length() && latin1; i++) {
            latin1 = text.charAt(i) < 0x100;
        }
        long array = 16 + (long) text.length() * (latin1 ? 1 : 2);
        return 24 + ((array + 7) & ~7L);
    }

    /**
     * The structure of {@code tree}: its object and array nodes and their fields and elements, plus
     * {@link #VALUE_NODE} per value (strings and numbers not counted: a copy shares them with its original, and the
     * keys are the original's strings). What a copy of a tree, or the mutated copy a decision holds, adds to it.
     */
    public static long of(JsonNode tree) {
        if (tree == null) {
            return 0;
        }
        if (tree.isObject()) {
            long bytes = OBJECT;
            for (Map.Entry<String, JsonNode> field : tree.properties()) {
                bytes += FIELD + of(field.getValue());
            }
            return bytes;
        }
        if (tree.isArray()) {
            long bytes = ARRAY;
            for (JsonNode element : tree) {
                bytes += ELEMENT + of(element);
            }
            return bytes;
        }
        return tree.isString() || tree.isNumber() ? VALUE_NODE : 0;
    }
}
