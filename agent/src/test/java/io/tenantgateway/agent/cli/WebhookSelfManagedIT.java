package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.WebhookTlsClient;
import io.tenantgateway.agent.webhook.WebhookCertificateController;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.webhook.WebhookServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tenant-gateway webhook --webhook-tls-self-managed}: the standalone command runs {@code run}'s webhook part,
 * so it has what {@code run}'s webhook has. Against fabric8's CRUD mock API it creates the CA and serving certificate
 * in the Secret, serves that certificate (a real TLS handshake, verified against the Secret's {@code ca.crt} for the
 * Service's DNS name, as kube-apiserver verifies it) and admits a review.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class WebhookSelfManagedIT {
    private static final String NAMESPACE = "kube-system";
    private static final String SECRET = "tenant-gateway-webhook-tls";

    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    @Test
    void createsTheSecretAndServesItsCertificate() throws Exception {
        String kubeconfig = MockApiKubeconfig.write(dir, client).toString();
        WebhookInBackground command = WebhookInBackground.start("--listen", "127.0.0.1:0",
                "--webhook-tls-secret=" + NAMESPACE + "/" + SECRET, "--webhook-tls-self-managed",
                "--device-config-map=", "--kubeconfig", kubeconfig);
        WebhookServer started = command.started(60);

        Secret secret = client.secrets().inNamespace(NAMESPACE).withName(SECRET).get();
        assertThat(secret).as("the Secret the webhook created; stderr:%n%s", command.err()).isNotNull();
        assertThat(secret.getMetadata().getLabels()).containsEntry(WebhookCertificateController.MANAGED_BY_LABEL,
                WebhookCertificateController.MANAGED_BY);
        assertThat(secret.getData()).containsKeys("tls.crt", "tls.key", "ca.crt", "ca.key");
        List<X509Certificate> ca = certificates(secret, "ca.crt");
        X509Certificate leaf = certificates(secret, "tls.crt").get(0);
        try (WebhookTlsClient webhook = WebhookTlsClient.connect(started.port(), ca)) {
            assertThat(webhook.peer()).isEqualTo(leaf);
            assertThat(webhook.admit()).isEqualTo(200);
        }
        assertThat(command.out()).contains("webhook listening on https://127.0.0.1:" + started.port() + "/webhook");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(command.out())
                .contains("quota check: on (ResourceQuotas from " + client.getMasterUrl()));
        assertThat(client.secrets().inNamespace(NAMESPACE).list().getItems())
                .extracting(created -> created.getMetadata().getName()).containsOnlyOnce(SECRET);

        assertThat(command.stop()).as(command.err()).isZero();
    }

    /**
     * A bad value that only a part starting in the background can find: the port, taken, once the certificate is in
     * the Secret. The command ends as at start: exit 2, one line naming the flag as it was given.
     */
    @Test
    void aListenPortFoundTakenInTheBackgroundExitsTwoWithOneLine() throws Exception {
        String kubeconfig = MockApiKubeconfig.write(dir, client).toString();
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            WebhookInBackground command = WebhookInBackground.start("--listen", "127.0.0.1:" + busy.getLocalPort(),
                    "--webhook-tls-secret=" + NAMESPACE + "/busy-port-tls", "--webhook-tls-self-managed",
                    "--device-config-map=", "--kubeconfig", kubeconfig);

            assertThat(command.exitCode(60)).as(command.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(command.err().strip()).isEqualTo("error: --listen: 127.0.0.1:" + busy.getLocalPort()
                    + " is in use");
            assertThat(client.secrets().inNamespace(NAMESPACE).withName("busy-port-tls").get())
                    .as("found in the background: the certificate was made first").isNotNull();
        }
    }

    private static List<X509Certificate> certificates(Secret secret, String key) {
        String pem = new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.US_ASCII);
        return Pem.parseCertificates(pem, Path.of(key));
    }
}
