package io.tenantgateway.agent.webhook;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One {@link WebhookCertificateController} against fabric8's CRUD mock API: what it does with a Secret of ours that
 * is broken or deleted, and how a start without the API fails. (Two agents converging: {@code
 * SelfManagedCertificatesIT}.)
 */
@Timeout(60)
@EnableKubernetesMockClient(crud = true, https = false)
class WebhookCertificateControllerIT {
    private static final WebhookCertificatesConfig CONFIG = WebhookCertificatesConfig.parse(
            "kube-system/tenant-gateway-webhook-tls", WebhookCertificatesConfig.DEFAULT_SERVICE,
            WebhookCertificatesConfig.DEFAULT_VALIDITY, WebhookCertificatesConfig.DEFAULT_RENEW_BEFORE,
            WebhookCertificatesConfig.DEFAULT_CA_VALIDITY, WebhookCertificatesConfig.DEFAULT_CA_OVERLAP);

    KubernetesClient client;
    private WebhookCertificateController controller;
    private final PrometheusRegistry registry = new PrometheusRegistry();

    @AfterEach
    void close() {
        if (controller != null) {
            controller.close();
        }
    }

    private WebhookCertificateController start() {
        controller = new WebhookCertificateController(client, CONFIG, registry, Clock.systemUTC(), "worker-1");
        controller.start();
        return controller;
    }

    private Secret secret() {
        return client.secrets().inNamespace("kube-system").withName("tenant-gateway-webhook-tls").get();
    }

    private static X509Certificate leaf(Secret secret) {
        return Pem.parseCertificates(new String(Base64.getDecoder().decode(secret.getData().get("tls.crt")),
                StandardCharsets.US_ASCII), Path.of("tls.crt")).get(0);
    }

    private static X509Certificate served(TlsMaterial material) {
        return material.current().identityOrNull().leaf();
    }

    @Test
    void aBrokenSecretOfOursIsReplacedWithANewCaAndCertificate() {
        client.secrets().inNamespace("kube-system").resource(new SecretBuilder().withNewMetadata()
                .withName("tenant-gateway-webhook-tls").withNamespace("kube-system")
                .addToLabels(WebhookCertificateController.MANAGED_BY_LABEL, WebhookCertificateController.MANAGED_BY)
                .endMetadata().withType("kubernetes.io/tls")
                .withData(Map.of("tls.crt", "bm90IGEgY2VydA==", "tls.key", "bm90IGEga2V5")).build()).create();

        start();

        Secret repaired = secret();
        assertThat(repaired.getData()).containsKeys("tls.crt", "tls.key", "ca.crt", "ca.key");
        assertThat(served(controller)).isEqualTo(leaf(repaired));
        assertThat(controller.current().trustOrNull().certificates()).hasSize(1);
        assertThat(repaired.getMetadata().getAnnotations().get(WebhookCertificateController.LAST_ROTATION_ANNOTATION))
                .startsWith("issue by worker-1 at ").contains("no CA with its key stored",
                        "secret:kube-system/tenant-gateway-webhook-tls/tls.crt");
        assertThat(controller.readiness().ok()).isTrue();
        assertThat(CertificateSecret.read(repaired).toString()).doesNotContain("PRIVATE KEY")
                .doesNotContain(repaired.getData().get("tls.key"));
    }

    @Test
    void aDeletedSecretIsCreatedAgainWhileTheOldCertificateIsStillServed() {
        start();
        Secret first = secret();
        X509Certificate before = served(controller);
        assertThat(before).isEqualTo(leaf(first));

        client.secrets().inNamespace("kube-system").withName("tenant-gateway-webhook-tls").delete();

        await().atMost(WAIT).untilAsserted(() -> {
            Secret again = secret();
            assertThat(again).isNotNull();
            assertThat(again.getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());
            assertThat(served(controller)).isEqualTo(leaf(again)).isNotEqualTo(before);
        });
        assertThat(controller.current().generation()).isEqualTo(2);
    }

    @Test
    void withoutTheApiTheStartFailsNamingTheSecretAndTheApi() throws Exception {
        int nobody = TunnelTestbed.freePort();
        try (KubernetesClient unreachable = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + nobody).withRequestRetryBackoffLimit(0).build()).build()) {
            WebhookCertificateController failing = new WebhookCertificateController(unreachable, CONFIG, registry,
                    Clock.systemUTC(), "worker-1");
            assertThatThrownBy(failing::start).hasMessageStartingWith(
                    "webhook certificates in Secret kube-system/tenant-gateway-webhook-tls")
                    .hasMessageContaining("127.0.0.1:" + nobody);
            assertThat(failing.isClosed()).isTrue();
            assertThat(failing.readiness().reason()).startsWith("no certificate from Secret"
                    + " kube-system/tenant-gateway-webhook-tls yet");
        }
        // Its metrics are gone with it: the next attempt registers its own.
        assertThat(start().current()).isNotNull();
    }

    @Test
    void theCaKeyMatchingALaterBundleEntryMakesThatTheSigningCa() {
        start();
        CertificateSecret stored = CertificateSecret.read(secret());
        var other = io.tenantgateway.certs.CertificateAuthority.create("other", io.tenantgateway.certs.KeyAlgorithm
                .EC_P256, java.time.Duration.ofDays(3650), Clock.systemUTC());
        CertBundle signing = stored.signingCa();
        Secret reordered = new SecretBuilder(secret()).addToData("ca.crt", Base64.getEncoder().encodeToString(
                Pem.encodeCertificates(java.util.List.of(other.certificate(), signing.leaf()))
                        .getBytes(StandardCharsets.US_ASCII))).build();
        CertificateSecret read = CertificateSecret.read(reordered);
        assertThat(read.problems()).isEmpty();
        assertThat(read.signingCa().leaf()).isEqualTo(signing.leaf());
        assertThat(read.bundle()).containsExactly(signing.leaf(), other.certificate());
    }
}
