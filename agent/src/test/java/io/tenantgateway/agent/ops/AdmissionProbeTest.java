package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Timeout(60)
class AdmissionProbeTest {
    private final JsonMapper json = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void requestLooksLikeKubeApiserversForAPodCreate() {
        JsonNode review = json.readTree(AdmissionProbe.request(AdmissionProbe.defaultPod(), "uid-1"));

        assertThat(review.get("apiVersion").asString()).isEqualTo("admission.k8s.io/v1");
        assertThat(review.get("kind").asString()).isEqualTo("AdmissionReview");
        JsonNode request = review.get("request");
        assertThat(request.get("uid").asString()).isEqualTo("uid-1");
        assertThat(request.at("/kind/kind").asString()).isEqualTo("Pod");
        assertThat(request.at("/resource/resource").asString()).isEqualTo("pods");
        assertThat(request.get("operation").asString()).isEqualTo("CREATE");
        assertThat(request.get("namespace").asString()).isEqualTo("default");
        assertThat(request.get("name").asString()).isEqualTo("tenant-gateway-probe");
        assertThat(request.get("dryRun").asBoolean()).isTrue();
        assertThat(request.at("/object/spec/containers/0/resources/limits/nvidia.com~1gpu").asString()).isEqualTo("1");
    }

    @Test
    void answerWithPatchIsDecoded() {
        String patch = Base64.getEncoder().encodeToString(
                "[{\"op\":\"add\",\"path\":\"/spec/schedulerName\",\"value\":\"hami-scheduler\"}]"
                        .getBytes(StandardCharsets.UTF_8));
        AdmissionProbe.Answer answer = AdmissionProbe.parse("{\"apiVersion\":\"admission.k8s.io/v1\","
                + "\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u\",\"allowed\":true,\"patchType\":\"JSONPatch\","
                + "\"patch\":\"" + patch + "\",\"warnings\":[\"w1\"]}}", "u");

        assertThat(answer.allowed()).isTrue();
        assertThat(answer.patchType()).isEqualTo("JSONPatch");
        assertThat(answer.patch()).containsExactly(
                "{\"op\":\"add\",\"path\":\"/spec/schedulerName\",\"value\":\"hami-scheduler\"}");
        assertThat(answer.warnings()).containsExactly("w1");
    }

    @Test
    void deniedAnswerKeepsCodeAndMessage() {
        AdmissionProbe.Answer answer = AdmissionProbe.parse("{\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u\","
                + "\"allowed\":false,\"status\":{\"code\":403,\"message\":\"pod has node assigned\"}}}", "u");

        assertThat(answer.allowed()).isFalse();
        assertThat(answer.code()).isEqualTo(403);
        assertThat(answer.message()).isEqualTo("pod has node assigned");
        assertThat(answer.patch()).isEmpty();
    }

    @Test
    void unusableAnswersSayWhy() {
        assertThatThrownBy(() -> AdmissionProbe.parse("<html>", "u")).hasMessageStartingWith("not JSON");
        assertThatThrownBy(() -> AdmissionProbe.parse("{\"kind\":\"Status\"}", "u"))
                .hasMessage("kind is 'Status' (expected: AdmissionReview)");
        assertThatThrownBy(() -> AdmissionProbe.parse("{\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"x\","
                + "\"allowed\":true}}", "u")).hasMessageContaining("does not echo the request's 'u'");
        assertThatThrownBy(() -> AdmissionProbe.parse("{\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u\"}}",
                "u")).hasMessage("response.allowed missing (expected: true or false)");
    }

    @Test
    void podFileMustBeAPod() throws Exception {
        Path pod = Files.writeString(dir.resolve("pod.yaml"), "kind: Pod\nmetadata: {name: p, namespace: ns}\n");
        assertThat(AdmissionProbe.readPod(pod).at("/metadata/namespace").asString()).isEqualTo("ns");
        Path deployment = Files.writeString(dir.resolve("deploy.yaml"), "kind: Deployment\n");
        assertThatThrownBy(() -> AdmissionProbe.readPod(deployment))
                .hasMessageEndingWith("not a Pod manifest (expected: kind: Pod)");
    }
}
