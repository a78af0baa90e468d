package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.OwnNodePolicyCelTest.AdmissionRequest;
import io.tenantgateway.agent.OwnNodePolicyCelTest.CompiledPolicy;
import io.tenantgateway.agent.OwnNodePolicyCelTest.Outcome;
import io.tenantgateway.agent.webhook.WebhookCertificateController;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The ValidatingAdmissionPolicy of {@code components/webhook-tls-self-managed}, evaluated with cel-java in the API
 * server's environment ({@link OwnNodePolicyCelTest} has the details): the agent's Secret create (which RBAC cannot
 * limit to a name) and update are allowed only for the webhook's own {@code kubernetes.io/tls} Secret, labelled as
 * the agents' own — exactly what {@link WebhookCertificateController} writes — and nothing else (a
 * service-account-token Secret, another name).
 */
class WebhookTlsSecretPolicyCelTest {
    private static final Path MANIFESTS = Path.of(System.getProperty("user.dir")).resolve("../manifests").normalize();
    private static final String POLICY = "tenant-gateway-webhook-tls-secret";
    private static final String AGENT = "system:serviceaccount:kube-system:tenant-gateway";
    private static final String KAMAJI = "system:serviceaccount:kube-system:konnectivity-agent";
    static final Map<String, Object> OURS = Map.of(WebhookCertificateController.MANAGED_BY_LABEL,
            WebhookCertificateController.MANAGED_BY);

    private static CompiledPolicy policy() throws IOException {
        return OwnNodePolicyCelTest.compile(OwnNodePolicyCelTest.policyIn(Files.readString(
                MANIFESTS.resolve("components/webhook-tls-self-managed/webhook-tls-secret-policy.yaml")), POLICY));
    }

    static Map<String, Object> secret(String name, String type, Map<String, Object> labels) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", name);
        metadata.put("namespace", "kube-system");
        if (labels != null) {
            metadata.put("labels", labels);
        }
        metadata.put("annotations", Map.of("kubernetes.io/service-account.name", "cluster-admin-sa"));
        Map<String, Object> secret = new LinkedHashMap<>();
        secret.put("apiVersion", "v1");
        secret.put("kind", "Secret");
        secret.put("metadata", metadata);
        secret.put("type", type);
        secret.put("data", Map.of("tls.crt", "LS0t", "tls.key", "LS0t"));
        return secret;
    }

    static AdmissionRequest write(String operation, String user, Map<String, Object> secret) {
        Map<String, Object> request = OwnNodePolicyCelTest.coreRequest("7d3f0c2e-0000-4000-8000-000000000005", "Secret",
                "secrets", secret);
        request.put("namespace", "kube-system");
        request.put("operation", operation);
        request.put("userInfo", Map.of("username", user, "uid", "u", "groups", List.of("system:serviceaccounts",
                "system:authenticated")));
        request.put("dryRun", false);
        request.put("options", Map.of("apiVersion", "meta.k8s.io/v1", "kind",
                operation.equals("CREATE") ? "CreateOptions" : "UpdateOptions"));
        return new AdmissionRequest(request, secret, operation.equals("CREATE") ? null : secret);
    }

    @Test
    void theAgentMayCreateAndUpdateItsOwnTlsSecret() throws IOException {
        CompiledPolicy policy = policy();
        Map<String, Object> ours = secret("tenant-gateway-webhook-tls", "kubernetes.io/tls", OURS);
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", AGENT, ours)))
                .isEqualTo(new Outcome(true, List.of()));
        assertThat(OwnNodePolicyCelTest.admit(policy, write("UPDATE", AGENT, ours)))
                .isEqualTo(new Outcome(true, List.of()));
    }

    @Test
    void aServiceAccountTokenSecretOrAnotherNameIsDenied() throws IOException {
        CompiledPolicy policy = policy();
        // With create on secrets in kube-system, this would mint a token of any service account there.
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", AGENT,
                secret("tenant-gateway-webhook-tls", "kubernetes.io/service-account-token", OURS))).denials())
                .containsExactly("the agent's Secret must be of type kubernetes.io/tls");
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", AGENT,
                secret("other", "kubernetes.io/tls", OURS))).denials())
                .containsExactly("the agent may write only the Secret tenant-gateway-webhook-tls");
        assertThat(OwnNodePolicyCelTest.admit(policy, write("UPDATE", AGENT,
                secret("tenant-gateway-webhook-tls", "kubernetes.io/tls", null))).denials())
                .containsExactly("the agent writes only Secrets labelled app.kubernetes.io/managed-by=tenant-gateway");
    }

    @Test
    void otherUsersAreNotMatched() throws IOException {
        assertThat(OwnNodePolicyCelTest.admit(policy(), write("CREATE", "kubernetes-admin",
                secret("anything", "kubernetes.io/service-account-token", null))).matched()).isFalse();
    }

    @Test
    void kamajiMatchesKamajisServiceAccount() throws Exception {
        CompiledPolicy policy = OwnNodePolicyCelTest.rendered("overlays/kamaji", POLICY);
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", KAMAJI,
                secret("tenant-gateway-webhook-tls", "kubernetes.io/tls", OURS)))).isEqualTo(new Outcome(true,
                        List.of()));
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", KAMAJI,
                secret("token", "kubernetes.io/service-account-token", null))).denials()).hasSize(3);
        assertThat(OwnNodePolicyCelTest.admit(policy, write("CREATE", AGENT,
                secret("token", "kubernetes.io/service-account-token", null))).matched()).isFalse();
    }
}
