package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.certs.testing.TestPki;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * doctor asks the API server about the Secret permissions the way the manifests grant them: every verb but create by
 * {@code resourceNames} (so the review names the Secret), create in the Secret's namespace without a name. The mock
 * API server answers like the RBAC authorizer for {@code components/webhook-tls-secret} and
 * {@code components/webhook-tls-self-managed}.
 */
@EnableKubernetesMockClient
class KubernetesAccessTest {
    KubernetesMockServer server;
    KubernetesClient client;

    @TempDir
    Path dir;

    @Test
    void secretPermissionsAreAskedAsTheyAreGranted() throws Exception {
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
                .andReply(201, request -> {
                    SelfSubjectAccessReview review = client.getKubernetesSerialization()
                            .unmarshal(request.getBody().readUtf8(), SelfSubjectAccessReview.class);
                    var attributes = review.getSpec().getResourceAttributes();
                    boolean allowed = !attributes.getResource().equals("secrets")
                            || "kube-system".equals(attributes.getNamespace())
                            && (attributes.getVerb().equals("create") ? attributes.getName() == null
                                    : "tenant-gateway-webhook-tls".equals(attributes.getName()));
                    review.setStatus(new SubjectAccessReviewStatusBuilder().withAllowed(allowed).build());
                    return review;
                }).always();
        TestPki.Files pki = TestPki.create("access").writeTo(dir);
        AgentConfig config = AgentCommand.parse("--ca-cert=" + pki.caCert(), "--node-name=worker-1",
                "--webhook-tls-secret=kube-system/tenant-gateway-webhook-tls", "--webhook-tls-self-managed").toConfig();

        List<KubernetesAccess.Answer> answers = KubernetesAccess.review(client, config,
                KubernetesAccess.needed(config));

        assertThat(answers).extracting(a -> a.permission().key()).contains("core/secrets:get", "core/secrets:list",
                "core/secrets:watch", "core/secrets:create", "core/secrets:update");
        assertThat(answers).allSatisfy(a -> assertThat(a.allowed()).as(a.permission().key()).isTrue());
    }
}
