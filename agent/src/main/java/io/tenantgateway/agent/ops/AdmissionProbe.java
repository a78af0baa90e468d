package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The dry-run AdmissionReview {@code probe} posts, built the way kube-apiserver builds one for a pod CREATE, and the
 * reading of the answer. Pure (no I/O except reading the optional pod file).
 */
public final class AdmissionProbe {
    /** A pod asking for one GPU: what HAMi's webhook mutates (schedulerName, gpucores). */
    static final String DEFAULT_POD = """
            {"apiVersion":"v1","kind":"Pod",
             "metadata":{"name":"tenant-gateway-probe","namespace":"default"},
             "spec":{"containers":[{"name":"probe","image":"busybox",
               "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}""";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * How the webhook answered.
     *
     * @param uid the echoed request uid
     * @param allowed {@code response.allowed}
     * @param code {@code response.status.code} (0 when absent)
     * @param message {@code response.status.message} ({@code ""} when absent)
     * @param patchType {@code response.patchType} ({@code ""} when no patch)
     * @param patch the decoded JSON patch operations, one compact JSON object each
     * @param warnings {@code response.warnings}
     */
    public record Answer(String uid, boolean allowed, int code, String message, String patchType,
            List<String> patch, List<String> warnings) {
        public Answer {
            patch = List.copyOf(patch);
            warnings = List.copyOf(warnings);
        }
    }

    private AdmissionProbe() {
    }

    /**
     * Reads a pod manifest (YAML or JSON).
     *
     * @throws ConfigException naming the file when it is unreadable or not a Pod
     */
    public static ObjectNode readPod(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw ConfigException.of("--pod", file + ": cannot read: " + e.getMessage(), e);
        }
        JsonNode node;
        try {
            node = YAMLMapper.builder().build().readTree(text);
        } catch (JacksonException e) {
            throw ConfigException.of("--pod", file + ": not YAML or JSON: " + e.getOriginalMessage(), e);
        }
        if (!(node instanceof ObjectNode pod) || !"Pod".equals(node.path("kind").asString(""))) {
            throw new ConfigException("--pod", file + ": not a Pod manifest", "kind: Pod");
        }
        return pod;
    }

    public static ObjectNode defaultPod() {
        return (ObjectNode) JSON.readTree(DEFAULT_POD);
    }

    /** An {@code admission.k8s.io/v1} AdmissionReview for creating {@code pod}, marked {@code dryRun}. */
    public static String request(ObjectNode pod, String uid) {
        return JSON.writeValueAsString(AdmissionRequests.podCreate(pod, uid, "tenant-gateway-probe", true));
    }

    /**
     * Reads the webhook's answer.
     *
     * @throws IllegalArgumentException when it is not an AdmissionReview answering {@code uid}; the message says
     *     what was wrong
     */
    public static Answer parse(String body, String uid) {
        JsonNode review;
        try {
            review = JSON.readTree(body);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
        if (review == null || !"AdmissionReview".equals(review.path("kind").asString(""))) {
            throw new IllegalArgumentException("kind is '" + (review == null ? "" : review.path("kind").asString(""))
                    + "' (expected: AdmissionReview)");
        }
        JsonNode response = review.path("response");
        if (!response.isObject()) {
            throw new IllegalArgumentException("AdmissionReview without a response");
        }
        String answeredUid = response.path("uid").asString("");
        if (!uid.equals(answeredUid)) {
            throw new IllegalArgumentException("response.uid '" + answeredUid + "' does not echo the request's '"
                    + uid + "' (kube-apiserver rejects such answers)");
        }
        if (!response.path("allowed").isBoolean()) {
            throw new IllegalArgumentException("response.allowed missing (expected: true or false)");
        }
        List<String> patch = new ArrayList<>();
        String patchType = response.path("patchType").asString("");
        if (response.hasNonNull("patch")) {
            try {
                String decoded = new String(Base64.getDecoder().decode(response.path("patch").asString("")),
                        StandardCharsets.UTF_8);
                JsonNode operations = JSON.readTree(decoded);
                if (operations == null || !operations.isArray()) {
                    throw new IllegalArgumentException("response.patch is not a JSON array");
                }
                operations.forEach(op -> patch.add(JSON.writeValueAsString(op)));
            } catch (IllegalArgumentException | JacksonException e) {
                throw new IllegalArgumentException("response.patch unreadable: " + e.getMessage(), e);
            }
        }
        List<String> warnings = new ArrayList<>();
        response.path("warnings").forEach(w -> warnings.add(w.asString("")));
        JsonNode status = response.path("status");
        return new Answer(answeredUid, response.path("allowed").asBoolean(), status.path("code").asInt(0),
                status.path("message").asString(""), patchType, patch, warnings);
    }
}
