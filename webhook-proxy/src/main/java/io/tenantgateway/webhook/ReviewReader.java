package io.tenantgateway.webhook;

import io.tenantgateway.webhook.policy.AdmissionPolicy;
import io.tenantgateway.webhook.policy.CompactNodes;
import io.tenantgateway.webhook.policy.TreeCost;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.function.LongConsumer;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.NullNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;
import tools.jackson.core.exc.StreamReadException;

/**
 * Reads an AdmissionReview in one streaming pass and keeps only the fields the webhook uses, so a 3 MiB review
 * costs its body plus a tree of a few KiB instead of a full tree 10–30 times the body's size (Buffer → bytes →
 * tree made three copies before).
 *
 * <p>Kept: {@code apiVersion}, {@code kind}, {@code request.{uid, kind{group,version,kind}, subResource, operation,
 * namespace, name}}, and of {@code request.object} (the Pod): {@code metadata.{name, generateName, namespace}},
 * of {@code metadata.annotations} the keys vendors read or write ({@code AdmissionPolicy.POD_ANNOTATIONS}), {@code spec.{schedulerName, nodeName, runtimeClassName}} and
 * per container of {@code spec.containers} and {@code spec.initContainers}: {@code name},
 * {@code securityContext.privileged}, {@code resources.limits}, {@code resources.requests}, whether
 * {@code lifecycle.postStart} is set (Ascend v2.9 sets it when absent) and {@code env} — each entry of {@code env}
 * with its {@code name} only: the policy only appends to it and asks whether a name is there, and the JSON patch
 * needs the entry count, never the values. Every other value is skipped
 * without being decoded (its strings are not even materialised), but still read, so malformed JSON anywhere is
 * refused as before. A kept field whose value has the wrong shape keeps that shape (an empty array or object), so
 * the policy's "expected an object, got an array" messages are unchanged; a JSON patch computed between two such
 * trees is the patch between the full objects, since both trees keep every path the policy writes and every array
 * index it appends after.
 *
 * <p>The kept tree is charged to the caller as it grows ({@link #read}'s {@code charge}), at what it holds on the
 * heap as {@link TreeCost} estimates it: a review made of millions of tiny containers is refused by the memory
 * budget instead of built, and a review of ten thousand ordinary ones is charged what it costs, not a multiple of
 * its body. The tree is made by {@link CompactNodes} (small field tables), the property names of the fields kept
 * by name are the schema's own strings, and per read, names of {@code limits}/{@code requests} and short string
 * values are shared between the containers that repeat them (a bounded table each): ten thousand containers
 * asking for {@code nvidia.com/gpu: "1"} hold one such name and one such value.
 *
 * <p>Jackson's read constraints ({@link #constraints}) bound what the tokenizer itself may do: document length
 * (the body limit), nesting depth, token count, string, number and property-name lengths.
 */
final class ReviewReader {
    /** The deepest legitimate review is under 30 levels (envelope 4 + pod 15 + managedFields' mirror of it). */
    static final int MAX_NESTING_DEPTH = 64;
    /** A string the webhook decodes (names, quantities; validation caps names at 253 characters). */
    static final int MAX_STRING_LENGTH = 64 * 1024;
    /** Numbers in a Pod are 64-bit integers at most (20 digits). */
    static final int MAX_NUMBER_LENGTH = 100;
    /** Longest property name; managedFields keys ({@code k:{"name":"…"}}) are the longest legitimate ones. */
    static final int MAX_NAME_LENGTH = 50_000;
    /** Strings up to this length are shared between the nodes that repeat them within one read. */
    static final int SHARED_STRING_LENGTH = 64;
    /** At most this many distinct names and values are shared per read (the table's own cost stays small). */
    static final int SHARED_ENTRIES = 1024;
    /** A shared table's entry: the hash map's node and its table slot. */
    private static final long SHARED_ENTRY_BYTES = 48;

    private final JsonMapper mapper;
    private final JsonNodeFactory nodes = CompactNodes.INSTANCE;

    /** @param maxRequestBytes the body limit: the document length limit and, halved, the token count limit */
    ReviewReader(int maxRequestBytes) {
        this.mapper = JsonMapper.builder(JsonFactory.builder()
                .streamReadConstraints(constraints(maxRequestBytes))
                // Names from hostile bodies would otherwise grow the factory's shared symbol table.
                .disable(TokenStreamFactory.Feature.CANONICALIZE_PROPERTY_NAMES)
                .build()).build();
    }

    /**
     * The constraints for a body limit: no document longer than the limit; at most {@code limit / 2} tokens (a
     * legitimate review spends at least 2 bytes per token: {@code "",} is 3, {@code 0,} is 2, while 2.3 million
     * {@code {},} fit in 3.25 MiB); the lengths above.
     */
    static StreamReadConstraints constraints(int maxRequestBytes) {
        return StreamReadConstraints.builder()
                .maxDocumentLength(maxRequestBytes)
                .maxTokenCount(Math.max(1_000, maxRequestBytes / 2))
                .maxNestingDepth(MAX_NESTING_DEPTH)
                .maxStringLength(MAX_STRING_LENGTH)
                .maxNumberLength(MAX_NUMBER_LENGTH)
                .maxNameLength(MAX_NAME_LENGTH)
                .build();
    }

    /** What to keep below a field: a scalar, a fixed set of fields, a whole flat map, a list of items, a count. */
    private sealed interface Keep permits Fields, FlatMap, Items, Placeholders, Scalar {
    }

    /** @param names each field's name to the schema's own instance of it (kept trees hold no copies) */
    private record Fields(Map<String, Keep> fields, Map<String, String> names) implements Keep {
        Fields(Map<String, Keep> fields) {
            this(fields, fields.keySet().stream().collect(Collectors.toUnmodifiableMap(name -> name, name -> name)));
        }
    }

    /** Every key, with scalar values (nested values keep only their shape). */
    private record FlatMap() implements Keep {
    }

    private record Items(Keep item) implements Keep {
    }

    /** An array whose entries count but are never read. */
    private record Placeholders() implements Keep {
    }

    private record Scalar() implements Keep {
    }

    private static final Keep SCALAR = new Scalar();
    private static final Keep CONTAINER = new Fields(Map.of(
            "name", SCALAR,
            "securityContext", new Fields(Map.of("privileged", SCALAR)),
            "resources", new Fields(Map.of("limits", new FlatMap(), "requests", new FlatMap())),
            "lifecycle", new Fields(Map.of("postStart", new Fields(Map.of()))),
            "env", new Items(new Fields(Map.of("name", SCALAR)))));
    private static final Keep POD = new Fields(Map.of(
            "metadata", new Fields(Map.of("name", SCALAR, "generateName", SCALAR, "namespace", SCALAR,
                    "annotations", new Fields(AdmissionPolicy.POD_ANNOTATIONS.stream().collect(
                            Collectors.toUnmodifiableMap(key -> key, key -> SCALAR))))),
            "spec", new Fields(Map.of(
                    "schedulerName", SCALAR,
                    "nodeName", SCALAR,
                    "runtimeClassName", SCALAR,
                    "containers", new Items(CONTAINER),
                    "initContainers", new Items(CONTAINER)))));
    private static final Keep REVIEW = new Fields(Map.of(
            "apiVersion", SCALAR,
            "kind", SCALAR,
            "request", new Fields(Map.of(
                    "uid", SCALAR,
                    "kind", new Fields(Map.of("group", SCALAR, "version", SCALAR, "kind", SCALAR)),
                    "subResource", SCALAR,
                    "operation", SCALAR,
                    "namespace", SCALAR,
                    "name", SCALAR,
                    "object", POD))));

    /**
     * Reads one JSON document.
     *
     * @param charge called with the estimated heap bytes of the kept tree as it grows (in steps of
     *     {@value Charger#STEP} bytes and once at the end); throws to stop
     * @return the kept tree; {@code null} when the body holds no JSON value (empty or whitespace only)
     * @throws tools.jackson.core.JacksonException malformed JSON, trailing tokens or a read constraint
     */
    JsonNode read(InputStream in, LongConsumer charge) {
        try (JsonParser parser = mapper.createParser(in)) {
            Charger charger = new Charger(charge);
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            JsonNode root = value(parser, REVIEW, charger);
            JsonToken trailing = parser.nextToken();
            if (trailing != null) {
                throw new StreamReadException(parser, "Trailing token (of type " + trailing + ") found after"
                        + " value (expected: one JSON object, the AdmissionReview)");
            }
            charger.flush();
            return root;
        }
    }

    /** The value at the parser's current token, as {@code keep} says. */
    private JsonNode value(JsonParser parser, Keep keep, Charger charger) {
        JsonToken token = parser.currentToken();
        if (!token.isStructStart()) {
            return scalar(parser, token, charger);
        }
        boolean object = token == JsonToken.START_OBJECT;
        if (object && keep instanceof Fields fields) {
            ObjectNode node = object(charger);
            for (String name = parser.nextName(); name != null; name = parser.nextName()) {
                Keep child = fields.fields().get(name);
                parser.nextToken();
                if (child == null) {
                    parser.skipChildren();
                } else {
                    charger.add(TreeCost.FIELD);
                    node.set(fields.names().get(name), value(parser, child, charger));
                }
            }
            return node;
        }
        if (object && keep instanceof FlatMap) {
            ObjectNode node = object(charger);
            for (String name = parser.nextName(); name != null; name = parser.nextName()) {
                parser.nextToken();
                charger.add(TreeCost.FIELD);
                node.set(charger.shared.name(name), value(parser, SCALAR, charger));
            }
            return node;
        }
        if (!object && keep instanceof Items items) {
            ArrayNode node = array(charger);
            while (parser.nextToken() != JsonToken.END_ARRAY) {
                charger.add(TreeCost.ELEMENT);
                node.add(value(parser, items.item(), charger));
            }
            return node;
        }
        if (!object && keep instanceof Placeholders) {
            ArrayNode node = array(charger);
            while (parser.nextToken() != JsonToken.END_ARRAY) {
                parser.skipChildren();
                charger.add(TreeCost.ELEMENT);
                node.add(NullNode.getInstance());
            }
            return node;
        }
        // Not the shape the webhook reads here: keep the shape (for the error message), not the content.
        parser.skipChildren();
        return object ? object(charger) : array(charger);
    }

    private ObjectNode object(Charger charger) {
        charger.add(TreeCost.OBJECT);
        return nodes.objectNode();
    }

    private ArrayNode array(Charger charger) {
        charger.add(TreeCost.ARRAY);
        return nodes.arrayNode();
    }

    private JsonNode scalar(JsonParser parser, JsonToken token, Charger charger) {
        return switch (token) {
            case VALUE_STRING -> charger.shared.value(parser.getString());
            case VALUE_NUMBER_INT -> {
                charger.add(TreeCost.NUMBER);
                yield switch (parser.getNumberType()) {
                    case INT -> nodes.numberNode(parser.getIntValue());
                    case LONG -> nodes.numberNode(parser.getLongValue());
                    default -> nodes.numberNode(parser.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                charger.add(TreeCost.NUMBER);
                yield nodes.numberNode(parser.getDoubleValue());
            }
            case VALUE_TRUE -> nodes.booleanNode(true);
            case VALUE_FALSE -> nodes.booleanNode(false);
            default -> nodes.nullNode();
        };
    }

    /**
     * One read's shared names and short values, at most {@value #SHARED_ENTRIES} of each; what is not shared is
     * charged as its own copy.
     */
    private final class Shared {
        private final Charger charger;
        private final Map<String, String> names = new HashMap<>();
        private final Map<String, StringNode> values = new HashMap<>();

        Shared(Charger charger) {
            this.charger = charger;
        }

        String name(String name) {
            String known = names.get(name);
            if (known != null) {
                return known;
            }
            charger.add(TreeCost.string(name));
            if (name.length() <= SHARED_STRING_LENGTH && names.size() < SHARED_ENTRIES) {
                charger.add(SHARED_ENTRY_BYTES);
                names.put(name, name);
            }
            return name;
        }

        StringNode value(String text) {
            StringNode known = values.get(text);
            if (known != null) {
                return known;
            }
            charger.add(TreeCost.VALUE_NODE + TreeCost.string(text));
            StringNode node = nodes.stringNode(text);
            if (text.length() <= SHARED_STRING_LENGTH && values.size() < SHARED_ENTRIES) {
                charger.add(SHARED_ENTRY_BYTES);
                values.put(text, node);
            }
            return node;
        }
    }

    /** Adds up estimates and hands them to the caller in steps of {@value #STEP} bytes. */
    private final class Charger {
        static final long STEP = 16 * 1024;
        private final LongConsumer charge;
        final Shared shared = new Shared(this);
        private long pending;

        Charger(LongConsumer charge) {
            this.charge = charge;
        }

        void add(long bytes) {
            pending += bytes;
            if (pending >= STEP) {
                flush();
            }
        }

        void flush() {
            if (pending > 0) {
                long bytes = pending;
                pending = 0;
                charge.accept(bytes);
            }
        }
    }
}
