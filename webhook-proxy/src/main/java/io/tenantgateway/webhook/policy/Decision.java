package io.tenantgateway.webhook.policy;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/**
 * The answer to one admission request, in controller-runtime's terms (HAMi uses its {@code Allowed},
 * {@code Denied}, {@code Errored} and {@code PatchResponseFromRaw}).
 *
 * @param outcome allowed, denied or errored
 * @param code the {@code status.code} of the admission response: 200, 403 (denied) or the error's code
 * @param reason the {@code status.reason} ({@code Forbidden} for denials), or {@code ""}
 * @param message the {@code status.message}, or {@code ""}
 * @param mutated the object after mutation when allowed with a possible change, else {@code null}; the caller
 *     diffs it against the original to build the JSON patch ({@link #writePatch}). The decision takes the tree
 *     over as it is, without a copy (a copy of a pod with thousands of containers is megabytes): whoever makes a
 *     decision hands it a tree nobody else holds or changes
 * @param warnings admission warnings shown to the user ({@code kubectl} prints them)
 */
public record Decision(Outcome outcome, int code, String reason, String message, JsonNode mutated,
        List<String> warnings) {

    public enum Outcome {
        ALLOWED, DENIED, ERRORED;

        /** Lower-case label for metrics and logs. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Decision {
        requireNonNull(outcome, "outcome");
        reason = reason == null ? "" : reason;
        message = message == null ? "" : message;
        warnings = List.copyOf(warnings == null ? List.of() : warnings);
        if (outcome != Outcome.ALLOWED && mutated != null) {
            throw new IllegalArgumentException("a " + outcome.label() + " decision carries no mutated object");
        }
        if (code < 100 || code > 599) {
            throw new IllegalArgumentException("code: " + code + " (expected: an HTTP status code)");
        }
    }

    /** Allowed; the patch is whatever turns the original into {@code mutated} (possibly nothing). */
    public static Decision allowed(JsonNode mutated) {
        return new Decision(Outcome.ALLOWED, 200, "", "", requireNonNull(mutated, "mutated"), List.of());
    }

    /** Allowed unchanged, with a message (HAMi's {@code admission.Allowed(message)}). */
    public static Decision allowedUnchanged(String message) {
        return new Decision(Outcome.ALLOWED, 200, "", message, null, List.of());
    }

    /** Denied: {@code allowed:false}, code 403, reason {@code Forbidden}. */
    public static Decision denied(String message) {
        return new Decision(Outcome.DENIED, 403, "Forbidden", message, null, List.of());
    }

    /** Errored: {@code allowed:false} with the error's code and message, no reason. */
    public static Decision errored(int code, String message) {
        return new Decision(Outcome.ERRORED, code, "", message, null, List.of());
    }

    public boolean allowed() {
        return outcome == Outcome.ALLOWED;
    }

    /** The mutated object (a copy: decisions are immutable). */
    @Override
    public JsonNode mutated() {
        return mutated == null ? null : mutated.deepCopy();
    }

    /**
     * Writes the JSON patch from {@code original} to the mutated object ({@link JsonPatches#write}), without copying
     * either; nothing when the decision carries no mutated object.
     *
     * @return the number of operations written, or -1 when there is no mutated object (nothing written)
     */
    public int writePatch(JsonNode original, tools.jackson.core.JsonGenerator out) {
        return mutated == null ? -1 : JsonPatches.write(original, mutated, out);
    }

    /**
     * The heap the mutated object holds, as {@link TreeCost} estimates it (0 when there is none): what the decision
     * adds to the parsed request while it waits to be written.
     */
    public long mutatedBytes() {
        return mutated == null ? 0 : TreeCost.of(mutated);
    }

    public Decision withWarning(String warning) {
        List<String> more = new ArrayList<>(warnings);
        more.add(requireNonNull(warning, "warning"));
        return new Decision(outcome, code, reason, message, mutated, more);
    }
}
