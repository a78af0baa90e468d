package io.tenantgateway.webhook.policy;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** Small typed accessors over the JSON tree whose failures name the field and what was expected. */
final class JsonTypes {
    private JsonTypes() {
    }

    static String describe(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** The object under {@code field}; {@code null} when absent (or created when asked to). */
    static ObjectNode object(ObjectNode parent, String field, String parentPath, boolean create) {
        JsonNode child = parent.get(field);
        if (child == null || child.isNull()) {
            return create ? parent.putObject(field) : null;
        }
        if (!child.isObject()) {
            throw new UndecodablePodException(parentPath + "." + field + ": expected an object, got "
                    + describe(child));
        }
        return (ObjectNode) child;
    }

    /** The string under {@code field}; {@code ""} when absent or null. */
    static String string(ObjectNode parent, String field, String parentPath) {
        JsonNode child = parent.get(field);
        if (child == null || child.isNull()) {
            return "";
        }
        if (!child.isString()) {
            throw new UndecodablePodException(parentPath + "." + field + ": expected a string, got "
                    + describe(child));
        }
        return child.stringValue();
    }
}
