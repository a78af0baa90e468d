package io.tenantgateway.webhook;

import io.tenantgateway.webhook.policy.Decision;
import java.io.InputStream;
import java.util.Set;
import tools.jackson.core.Base64Variants;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;

/**
 * Reading and writing {@code admission.k8s.io} AdmissionReview objects. v1 and v1beta1 have the same shape; the
 * answer carries the apiVersion of the request, as the API server requires.
 */
final class AdmissionReviews {
    static final String V1 = "admission.k8s.io/v1";
    static final String V1BETA1 = "admission.k8s.io/v1beta1";
    static final String KIND = "AdmissionReview";
    private static final Set<String> VERSIONS = Set.of(V1, V1BETA1);

    private AdmissionReviews() {
    }

    /** The parts of {@code request} the webhook uses. */
    record Request(String apiVersion, String uid, String group, String kind, String subResource, String operation,
            String namespace, String name, JsonNode object) {

        boolean podCreate() {
            return group.isEmpty() && kind.equals("Pod") && subResource.isEmpty() && operation.equals("CREATE");
        }

        /** The request's name, else the object's name or generateName prefix (pods created by controllers). */
        String podName() {
            if (!name.isEmpty()) {
                return name;
            }
            JsonNode metadata = object == null ? null : object.path("metadata");
            if (metadata == null || !metadata.isObject()) {
                return "";
            }
            String objectName = metadata.path("name").asString("");
            return objectName.isEmpty() ? metadata.path("generateName").asString("") : objectName;
        }
    }

    /** Not an AdmissionReview we can answer; carries what could be read for the error answer. */
    static final class InvalidReview extends Exception {
        private static final long serialVersionUID = 1L;
        final String apiVersion;
        final String uid;

        InvalidReview(String message, String apiVersion, String uid) {
            super(message, null, false, false);
            this.apiVersion = apiVersion;
            this.uid = uid;
        }
    }

    static Request parse(JsonNode root) throws InvalidReview {
        if (!root.isObject()) {
            throw new InvalidReview("not an AdmissionReview: the body is " + describe(root)
                    + " (expected: a JSON object)", V1, "");
        }
        JsonNode apiVersionNode = root.get("apiVersion");
        if (apiVersionNode == null || !apiVersionNode.isString()) {
            throw new InvalidReview("not an AdmissionReview: apiVersion missing (expected: " + V1 + " or "
                    + V1BETA1 + ")", V1, "");
        }
        String apiVersion = apiVersionNode.stringValue();
        if (!VERSIONS.contains(apiVersion)) {
            throw new InvalidReview("unsupported AdmissionReview apiVersion '" + apiVersion + "' (expected: " + V1
                    + " or " + V1BETA1 + ")", V1, "");
        }
        String kind = root.path("kind").asString("");
        if (!kind.equals(KIND)) {
            throw new InvalidReview("not an AdmissionReview: kind '" + kind + "' (expected: " + KIND + ")",
                    apiVersion, "");
        }
        JsonNode request = root.get("request");
        if (request == null || request.isNull()) {
            throw new InvalidReview("AdmissionReview has no request (expected: a request object with uid, kind,"
                    + " operation and object)", apiVersion, "");
        }
        if (!request.isObject()) {
            throw new InvalidReview("AdmissionReview request is " + describe(request) + " (expected: an object)",
                    apiVersion, "");
        }
        String uid = request.path("uid").asString("");
        if (uid.isEmpty()) {
            throw new InvalidReview("AdmissionReview request.uid missing (expected: the request's UID)",
                    apiVersion, "");
        }
        JsonNode requestKind = request.path("kind");
        if (!requestKind.isObject() || requestKind.path("kind").asString("").isEmpty()) {
            throw new InvalidReview("AdmissionReview request.kind missing (expected: {group, version, kind})",
                    apiVersion, uid);
        }
        String operation = request.path("operation").asString("");
        if (operation.isEmpty()) {
            throw new InvalidReview("AdmissionReview request.operation missing (expected: CREATE, UPDATE, DELETE"
                    + " or CONNECT)", apiVersion, uid);
        }
        JsonNode object = request.get("object");
        return new Request(apiVersion, uid, requestKind.path("group").asString(""),
                requestKind.path("kind").asString(""), request.path("subResource").asString(""), operation,
                request.path("namespace").asString(""), request.path("name").asString(""),
                object == null || object.isNull() ? null : object);
    }

    /**
     * Writes the answer: {@code {apiVersion, kind, response: {uid, allowed, status, patchType?, patch?,
     * warnings?}}}. The patch is read from {@code patch} and written base64-encoded as it is read (standard
     * alphabet, padded, no line breaks: what the API server decodes), so it is never held twice.
     *
     * @param patch the JSON patch's bytes, or {@code null} for none
     * @param patchLength how many bytes {@code patch} holds
     */
    static void writeAnswer(JsonGenerator out, String apiVersion, String uid, Decision decision, InputStream patch,
            long patchLength) {
        out.writeStartObject();
        out.writeStringProperty("apiVersion", apiVersion);
        out.writeStringProperty("kind", KIND);
        out.writeName("response");
        out.writeStartObject();
        out.writeStringProperty("uid", uid);
        out.writeBooleanProperty("allowed", decision.allowed());
        out.writeName("status");
        out.writeStartObject();
        out.writeNumberProperty("code", decision.code());
        if (!decision.reason().isEmpty()) {
            out.writeStringProperty("reason", decision.reason());
        }
        if (!decision.message().isEmpty()) {
            out.writeStringProperty("message", decision.message());
        }
        out.writeEndObject();
        if (patch != null && patchLength > 0) {
            out.writeStringProperty("patchType", "JSONPatch");
            out.writeName("patch");
            out.writeBinary(Base64Variants.MIME_NO_LINEFEEDS, patch, Math.toIntExact(patchLength));
        }
        if (!decision.warnings().isEmpty()) {
            out.writeName("warnings");
            out.writeStartArray();
            for (String warning : decision.warnings()) {
                out.writeString(warning);
            }
            out.writeEndArray();
        }
        out.writeEndObject();
        out.writeEndObject();
    }

    /**
     * An upper bound of the bytes {@link #writeAnswer} writes: the patch's base64 and the envelope, its strings
     * counted at six bytes a character (what JSON's escape of a control character takes).
     */
    static long answerBytes(String apiVersion, String uid, Decision decision, long patchLength) {
        long strings = apiVersion.length() + uid.length() + decision.reason().length() + decision.message().length();
        for (String warning : decision.warnings()) {
            strings += warning.length() + 3;
        }
        return 256 + 6 * strings + (patchLength + 2) / 3 * 4;
    }

    private static String describe(JsonNode node) {
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        };
    }
}
