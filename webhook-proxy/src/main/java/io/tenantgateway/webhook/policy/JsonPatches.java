package io.tenantgateway.webhook.policy;

import io.fabric8.zjsonpatch.DiffFlags;
import io.fabric8.zjsonpatch.JsonDiff;
import java.util.EnumSet;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;

/** RFC 6902 patches between two JSON trees, restricted to add/remove/replace (no move/copy, no test). */
public final class JsonPatches {
    // Plain operations: every API server version and every patch reader understands them, and a reviewer can
    // read them against HAMi's own patches (which come from gomodules jsonpatch: add/remove/replace only).
    private static final EnumSet<DiffFlags> FLAGS = EnumSet.of(DiffFlags.OMIT_MOVE_OPERATION,
            DiffFlags.OMIT_COPY_OPERATION, DiffFlags.OMIT_VALUE_ON_REMOVE);

    private JsonPatches() {
    }

    /** The operations that turn {@code original} into {@code mutated}; an empty array when they are equal. */
    public static ArrayNode diff(JsonNode original, JsonNode mutated) {
        return (ArrayNode) JsonDiff.asJson(original, mutated, FLAGS);
    }
}
