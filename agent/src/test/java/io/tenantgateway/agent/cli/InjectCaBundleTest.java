package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.certs.testing.TestPki;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@EnableKubernetesMockClient(crud = true, https = false)
class InjectCaBundleTest {
    static KubernetesClient client;

    @TempDir
    Path dir;

    @Test
    void writesTheCaIntoEveryWebhookOnceAndNamesAMissingConfiguration() throws Exception {
        TestPki.Files pki = TestPki.create("inject").writeTo(dir);
        client.admissionRegistration().v1().mutatingWebhookConfigurations().resource(
                new MutatingWebhookConfigurationBuilder().withNewMetadata().withName("tenant-gateway-hami-webhook")
                        .endMetadata()
                        .addNewWebhook().withName("vgpu.hami.io").withNewClientConfig().withNewService()
                        .withName("tenant-gateway-webhook").withNamespace("kube-system").endService()
                        .endClientConfig().endWebhook()
                        .addNewWebhook().withName("second.hami.io").withNewClientConfig().withNewService()
                        .withName("tenant-gateway-webhook").withNamespace("kube-system").endService()
                        .endClientConfig().endWebhook()
                        .build()).create();

        CliRun first = CliRun.of("certs", "inject-ca-bundle", "--ca", pki.caCert().toString(), "--kubeconfig",
                MockApiKubeconfig.write(dir, client).toString());
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).contains("CA bundle written into 2 of 2 webhooks");
        MutatingWebhookConfiguration stored = client.admissionRegistration().v1().mutatingWebhookConfigurations()
                .withName("tenant-gateway-hami-webhook").get();
        String expected = Base64.getEncoder().encodeToString(Files.readString(pki.caCert())
                .getBytes(StandardCharsets.US_ASCII));
        assertThat(stored.getWebhooks()).allSatisfy(w -> assertThat(w.getClientConfig().getCaBundle())
                .isEqualTo(expected));

        CliRun again = CliRun.of("certs", "inject-ca-bundle", "--ca", pki.caCert().toString(), "--kubeconfig",
                MockApiKubeconfig.write(dir, client).toString());
        assertThat(again.out()).contains("CA bundle already current (2 webhooks)");

        CliRun missing = CliRun.of("certs", "inject-ca-bundle", "--ca", pki.caCert().toString(), "--name", "nope",
                "--kubeconfig", MockApiKubeconfig.write(dir, client).toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err().strip()).isEqualTo("error: MutatingWebhookConfiguration nope: not found (expected:"
                + " the configuration from manifests/, e.g. kubectl apply -k manifests/base)");
    }
}
