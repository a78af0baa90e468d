package io.tenantgateway.webhook;

import java.util.UUID;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** AdmissionReview requests as kube-apiserver sends them. */
final class Reviews {
    static final String V1 = "admission.k8s.io/v1";
    static final String V1BETA1 = "admission.k8s.io/v1beta1";

    private Reviews() {
    }

    static ObjectNode podCreate(JsonNode pod) {
        return review(V1, "", "Pod", "CREATE", pod);
    }

    static ObjectNode podCreate(String apiVersion, JsonNode pod) {
        return review(apiVersion, "", "Pod", "CREATE", pod);
    }

    static ObjectNode review(String apiVersion, String group, String kind, String operation, JsonNode object) {
        ObjectNode review = Pods.JSON.createObjectNode();
        review.put("apiVersion", apiVersion);
        review.put("kind", "AdmissionReview");
        ObjectNode request = review.putObject("request");
        request.put("uid", UUID.randomUUID().toString());
        ObjectNode requestKind = request.putObject("kind");
        requestKind.put("group", group);
        requestKind.put("version", "v1");
        requestKind.put("kind", kind);
        ObjectNode resource = request.putObject("resource");
        resource.put("group", group);
        resource.put("version", "v1");
        resource.put("resource", kind.toLowerCase(java.util.Locale.ROOT) + "s");
        request.put("operation", operation);
        if (object != null) {
            String namespace = object.path("metadata").path("namespace").asString("team-a");
            request.put("namespace", namespace);
            request.put("name", object.path("metadata").path("name").asString(""));
            request.set("object", object);
        }
        ObjectNode userInfo = request.putObject("userInfo");
        userInfo.put("username", "system:serviceaccount:team-a:deployer");
        request.put("dryRun", false);
        return review;
    }
}
