package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code admission.k8s.io/v1} AdmissionReview kube-apiserver sends a mutating webhook for a pod CREATE. Built
 * here once for every caller that plays kube-apiserver (the lab's admission caller, {@code probe}'s dry run).
 */
public final class AdmissionRequests {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private AdmissionRequests() {
    }

    /**
     * @param pod the pod as it would be stored (its metadata name/generateName and namespace are copied)
     * @param uid the request uid the webhook must echo
     * @param username {@code userInfo.username}
     * @param dryRun whether the API server would only simulate the create ({@code kubectl --dry-run=server})
     */
    public static ObjectNode podCreate(ObjectNode pod, String uid, String username, boolean dryRun) {
        requireNonNull(pod, "pod");
        requireNonNull(uid, "uid");
        requireNonNull(username, "username");
        ObjectNode review = JSON.createObjectNode();
        review.put("apiVersion", "admission.k8s.io/v1");
        review.put("kind", "AdmissionReview");
        ObjectNode request = review.putObject("request");
        request.put("uid", uid);
        ObjectNode kind = request.putObject("kind");
        kind.put("group", "").put("version", "v1").put("kind", "Pod");
        ObjectNode resource = request.putObject("resource");
        resource.put("group", "").put("version", "v1").put("resource", "pods");
        request.set("requestKind", kind.deepCopy());
        request.set("requestResource", resource.deepCopy());
        JsonNode metadata = pod.path("metadata");
        request.put("name", metadata.path("name").asString(metadata.path("generateName").asString("")));
        request.put("namespace", metadata.path("namespace").asString("default"));
        request.put("operation", "CREATE");
        ObjectNode user = request.putObject("userInfo");
        user.put("username", username);
        user.putArray("groups").add("system:authenticated");
        request.set("object", pod);
        request.put("dryRun", dryRun);
        ObjectNode options = request.putObject("options");
        options.put("apiVersion", "meta.k8s.io/v1").put("kind", "CreateOptions");
        if (dryRun) {
            options.putArray("dryRun").add("All");
        }
        return review;
    }
}
