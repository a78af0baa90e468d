package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.testing.Cleanup;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.agent.testing.WebhookTlsClient;
import io.tenantgateway.agent.webhook.WebhookCertificateController;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.SubjectNames;
import io.tenantgateway.certs.TrustBundle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code --webhook-tls-self-managed} with two real agents in this JVM against one fabric8 CRUD mock API: they create
 * one Secret between them, both serve its certificate (a real TLS handshake to each, verified the way kube-apiserver
 * verifies it: against the webhook configuration's {@code caBundle}, for the Service's name), and a renewal or a CA
 * rotation is made by exactly one of them and served by both without a restart, while an open connection lives on.
 */
@Timeout(180)
@EnableKubernetesMockClient(crud = true, https = false)
class SelfManagedCertificatesIT {
    private static final String NAMESPACE = "kube-system";
    private static final String SECRET = "tenant-gateway-webhook-tls";
    private static final String CONFIGURATION = AgentCommand.DEFAULT_WEBHOOK_CONFIG_NAME;
    private static final Path MANIFESTS = Path.of(System.getProperty("user.dir")).resolve("../manifests").normalize();
    private static final Duration WAIT = Duration.ofSeconds(60);

    // Instance fields: a fresh mock API (and so an empty store) for each test.
    KubernetesMockServer server;
    KubernetesClient client;

    @TempDir
    Path dir;

    private KubernetesClient harness;
    private TunnelTestbed testbed;
    private final List<Agent> agents = new ArrayList<>();

    @BeforeEach
    void webhookConfiguration() throws Exception {
        harness = ApiCalls.testClient(client);
        harness.admissionRegistration().v1().mutatingWebhookConfigurations().resource(
                new KubernetesSerialization().unmarshal(Files.readString(
                        MANIFESTS.resolve("base/mutatingwebhookconfiguration.yaml")),
                        MutatingWebhookConfiguration.class)).create();
        testbed = new TunnelTestbed(dir);
        ApiCalls.drain(server);
    }

    @AfterEach
    void close() throws Exception {
        List<AutoCloseable> parts = new ArrayList<>(agents);
        parts.add(testbed);
        parts.add(harness);
        Cleanup.closeInOrder(parts.toArray(AutoCloseable[]::new));
    }

    /** Two agents built from the same flags (as one DaemonSet's pods), started at the same moment. */
    private void startTwoAgents(String... extraArgs) throws Exception {
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.addAll(List.of("--webhook-listen=127.0.0.1:0", "--webhook-tls-secret=" + NAMESPACE + "/" + SECRET,
                "--webhook-tls-self-managed", "--manage-webhook-config",
                "--kubeconfig=" + MockApiKubeconfig.write(dir, client)));
        args.addAll(List.of(extraArgs));
        for (int i = 0; i < 2; i++) {
            AgentCommand command = new AgentCommand();
            new CommandLine(command).parseArgs(args.toArray(String[]::new));
            agents.add(new Agent(command.toConfig(), Clock.systemUTC()));
        }
        CompletableFuture.allOf(agents.stream().map(agent -> CompletableFuture.runAsync(agent::start))
                .toArray(CompletableFuture[]::new)).join();
    }

    @Test
    void twoAgentsCreateOneSecretServeItAndRenewItTogetherWhileConnectionsStayOpen() throws Exception {
        startTwoAgents();

        // One Secret, served by both; kube-apiserver's check (caBundle, the Service's name) passes for each.
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            Secret secret = secret();
            assertThat(secret.getMetadata().getLabels()).containsEntry(WebhookCertificateController.MANAGED_BY_LABEL,
                    WebhookCertificateController.MANAGED_BY);
            for (Agent agent : agents) {
                assertThat(servedBy(agent)).isEqualTo(leaf(secret));
                assertThat(readyz(agent)).contains("[+]webhook-serving ok", "[+]webhook-certificate ok",
                        "[+]webhook-ca-bundle ok");
            }
        });
        Secret created = secret();
        assertThat(harness.secrets().inNamespace(NAMESPACE).list().getItems()).hasSize(1);
        X509Certificate first = leaf(created);
        List<X509Certificate> caBundle = caBundle();
        assertThat(caBundle).hasSize(1).containsExactlyElementsOf(certificates(created, "ca.crt"));
        assertThat(new TrustBundle(caBundle).verify(List.of(first), Instant.now()).valid()).isTrue();
        assertThat(SubjectNames.of(first)).containsExactly("DNS:tenant-gateway-webhook",
                "DNS:tenant-gateway-webhook.kube-system", "DNS:tenant-gateway-webhook.kube-system.svc",
                "DNS:tenant-gateway-webhook.kube-system.svc.cluster.local");
        assertThat(Duration.between(Instant.now(), first.getNotAfter().toInstant()))
                .isGreaterThan(Duration.ofDays(364));
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "issue")).isEqualTo(1);
        assertThat(events(WebhookCertificateController.REASON_ISSUED)).hasSize(1);

        // A connection opened now, to the first agent.
        WebhookTlsClient open = WebhookTlsClient.connect(webhookPort(agents.get(0)), caBundle);
        assertThat(open.admit()).isEqualTo(200);
        assertThat(open.peer()).isEqualTo(first);

        // The stored certificate is (made to be) close to expiry: one day left, under --webhook-tls-renew-before.
        CertificateAuthority ca = CertificateAuthority.of(new CertBundle(certificates(created, "ca.crt"),
                Pem.parsePrivateKey(decode(created, "ca.key"), Path.of("ca.key"))), Clock.systemUTC());
        CertBundle nearExpiry = ca.issue(CertificateRequest.server(WebhookTlsClient.SERVICE_DNS)
                .dnsNames(SubjectNames.of(first).stream().map(n -> n.substring(4)).toList())
                .validity(Duration.ofDays(1)).build());
        Map<String, String> data = new LinkedHashMap<>(created.getData());
        data.put("tls.crt", encode(nearExpiry.certificatePem()));
        data.put("tls.key", encode(nearExpiry.privateKeyPem()));
        harness.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder(created).withData(data).build()).update();

        // Exactly one agent renews; both serve the renewed certificate; the CA (and so caBundle) stays.
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(open.admit()).isEqualTo(200); // keeps the open connection busy (idle ones are closed)
            Secret secret = secret();
            X509Certificate renewed = leaf(secret);
            assertThat(renewed).isNotIn(first, nearExpiry.leaf());
            for (Agent agent : agents) {
                assertThat(servedBy(agent)).isEqualTo(renewed);
            }
        });
        Secret renewedSecret = secret();
        X509Certificate renewed = leaf(renewedSecret);
        assertThat(Duration.between(Instant.now(), renewed.getNotAfter().toInstant()))
                .isGreaterThan(Duration.ofDays(364));
        assertThat(decode(renewedSecret, "ca.crt")).isEqualTo(decode(created, "ca.crt"));
        assertThat(decode(renewedSecret, "ca.key")).isEqualTo(decode(created, "ca.key"));
        assertThat(caBundle()).isEqualTo(caBundle);
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "renew")).isEqualTo(1);
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "issue")).isEqualTo(1);
        assertThat(renewedSecret.getMetadata().getAnnotations().get(
                WebhookCertificateController.LAST_ROTATION_ANNOTATION)).startsWith("renew by ")
                .contains("needs renewal before 30d");
        await().atMost(WAIT).untilAsserted(() -> assertThat(events(WebhookCertificateController.REASON_RENEWED))
                .hasSize(1));

        // The connection opened before the renewal still works, on the certificate it was opened with.
        assertThat(open.admit()).isEqualTo(200);
        assertThat(open.peer()).isEqualTo(first);
        open.close();

        Set<String> calls = ApiCalls.drain(server);
        assertThat(calls).contains("core/secrets:create", "core/secrets:update", "core/secrets:watch",
                "core/events:create", "admissionregistration.k8s.io/mutatingwebhookconfigurations:patch");
        assertThat(KubernetesPermissions.keys(KubernetesPermissions.needed(agents.get(0).config().apiUses(false))))
                .as("the uses' permissions cover every call made").containsAll(calls);
    }

    @Test
    void aCaRotationPublishesTheNewCaFirstAndMovesTheCertificateAfterTheOverlap() throws Exception {
        // A CA with 100 days left: under one certificate validity (365 days), so it is due for rotation.
        Clock issued = Clock.offset(Clock.systemUTC(), Duration.ofDays(-265));
        CertificateAuthority old = CertificateAuthority.create("old-ca", KeyAlgorithm.EC_P256, Duration.ofDays(365),
                issued);
        List<String> names = List.of("tenant-gateway-webhook", "tenant-gateway-webhook.kube-system",
                WebhookTlsClient.SERVICE_DNS, WebhookTlsClient.SERVICE_DNS + ".cluster.local");
        CertBundle oldLeaf = CertificateAuthority.of(old.bundle(), Clock.systemUTC()).issue(
                CertificateRequest.server(WebhookTlsClient.SERVICE_DNS).dnsNames(names).validity(Duration.ofDays(60))
                        .build());
        harness.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder()
                .withNewMetadata().withName(SECRET).withNamespace(NAMESPACE)
                    .addToLabels(WebhookCertificateController.MANAGED_BY_LABEL, WebhookCertificateController.MANAGED_BY)
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(Map.of("tls.crt", encode(oldLeaf.certificatePem()), "tls.key",
                        encode(oldLeaf.privateKeyPem()), "ca.crt", encode(old.trustBundle().pem()), "ca.key",
                        encode(old.bundle().privateKeyPem())))
                .build()).create();
        Duration overlap = Duration.ofSeconds(3);

        startTwoAgents("--webhook-ca-overlap=3s");

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            Secret secret = secret();
            List<X509Certificate> bundle = certificates(secret, "ca.crt");
            assertThat(bundle).hasSize(2).endsWith(old.certificate());
            X509Certificate served = leaf(secret);
            assertThat(served.getIssuerX500Principal()).isEqualTo(bundle.get(0).getSubjectX500Principal());
            assertThat(caBundle()).isEqualTo(bundle);
            for (Agent agent : agents) {
                assertThat(servedBy(agent)).isEqualTo(served);
            }
        });
        Secret rotated = secret();
        X509Certificate newCa = certificates(rotated, "ca.crt").get(0);
        X509Certificate moved = leaf(rotated);
        // The certificate moved to the new CA only after the new CA had been published for the overlap.
        assertThat(moved.getNotBefore().toInstant()).isAfterOrEqualTo(newCa.getNotBefore().toInstant()
                .plus(overlap).minusSeconds(1)); // notBefore has whole seconds
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "rotate-ca")).isEqualTo(1);
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "renew")).isEqualTo(1);
        assertThat(sum("tenant_gateway_webhook_certificate_rotations_total", "issue")).isZero();
        assertThat(events(WebhookCertificateController.REASON_CA_ROTATED)).hasSize(1);
        // Both CAs are trusted: a caller that still has only the old bundle keeps working until the move.
        assertThat(new TrustBundle(caBundle()).verify(List.of(moved), Instant.now()).valid()).isTrue();
    }

    @Test
    void aSecretNotMadeByTheAgentsIsServedAndNeverWritten() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create("by-hand", KeyAlgorithm.EC_P256, Duration.ofDays(30),
                Clock.systemUTC());
        // Due for renewal by the agents' rules (2 days left), but not theirs to renew.
        CertBundle leaf = ca.issue(CertificateRequest.server(WebhookTlsClient.SERVICE_DNS)
                .dnsNames(WebhookTlsClient.SERVICE_DNS).validity(Duration.ofDays(2)).build());
        harness.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder()
                .withNewMetadata().withName(SECRET).withNamespace(NAMESPACE).endMetadata()
                .withData(Map.of("tls.crt", encode(leaf.certificatePem()), "tls.key", encode(leaf.privateKeyPem()),
                        "ca.crt", encode(ca.trustBundle().pem())))
                .build()).create();
        String version = secret().getMetadata().getResourceVersion();

        startTwoAgents();

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            for (Agent agent : agents) {
                assertThat(servedBy(agent)).isEqualTo(leaf.leaf());
            }
            assertThat(events(WebhookCertificateController.REASON_NOT_MANAGED)).isNotEmpty()
                    .allSatisfy(e -> assertThat(e.getMessage()).contains("has no label app.kubernetes.io/managed-by"));
        });
        assertThat(secret().getMetadata().getResourceVersion()).isEqualTo(version);
        assertThat(agents).allSatisfy(agent -> assertThat(PartViews.webhookCertificates(agent).orElseThrow()
                .servingForeignSecret()).isTrue());
        assertThat(ApiCalls.drain(server)).doesNotContain("core/secrets:create", "core/secrets:update");
    }

    // --- helpers --------------------------------------------------------------------------------------------

    private Secret secret() {
        Secret secret = harness.secrets().inNamespace(NAMESPACE).withName(SECRET).get();
        assertThat(secret).as("Secret " + NAMESPACE + "/" + SECRET).isNotNull();
        return secret;
    }

    private static String decode(Secret secret, String key) {
        return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.US_ASCII);
    }

    private static String encode(String pem) {
        return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII));
    }

    private static List<X509Certificate> certificates(Secret secret, String key) {
        return Pem.parseCertificates(decode(secret, key), Path.of(key));
    }

    private static X509Certificate leaf(Secret secret) {
        return certificates(secret, "tls.crt").get(0);
    }

    /** The CAs kube-apiserver would trust: the webhook configuration's caBundle. */
    private List<X509Certificate> caBundle() {
        MutatingWebhookConfiguration configuration = harness.admissionRegistration().v1()
                .mutatingWebhookConfigurations().withName(CONFIGURATION).get();
        String bundle = configuration.getWebhooks().get(0).getClientConfig().getCaBundle();
        assertThat(bundle).as("caBundle").isNotNull();
        return Pem.parseCertificates(new String(Base64.getDecoder().decode(bundle), StandardCharsets.US_ASCII),
                Path.of("caBundle"));
    }

    private static int webhookPort(Agent agent) {
        return PartViews.webhook(agent).orElseThrow().port();
    }

    /** The certificate {@code agent} presents in a new handshake that trusts only the configuration's caBundle. */
    private X509Certificate servedBy(Agent agent) throws Exception {
        try (WebhookTlsClient connection = WebhookTlsClient.connect(webhookPort(agent), caBundle())) {
            return connection.peer();
        }
    }

    private static String readyz(Agent agent) throws Exception {
        return LoopbackHttp.get(agent.health().orElseThrow().boundPort(), "/readyz?verbose").body();
    }

    /** A counter's value summed over both agents' {@code /metrics}. */
    private double sum(String counter, String action) throws Exception {
        Pattern sample = Pattern.compile("^" + counter + "\\{action=\"" + action + "\"} (\\S+)$", Pattern.MULTILINE);
        double total = 0;
        for (Agent agent : agents) {
            Matcher matcher = sample.matcher(LoopbackHttp.get(agent.health().orElseThrow().boundPort(), "/metrics")
                    .body());
            assertThat(matcher.find()).as(counter + "{action=" + action + "}").isTrue();
            total += Double.parseDouble(matcher.group(1));
        }
        return total;
    }

    private List<Event> events(String reason) {
        return harness.v1().events().inNamespace(NAMESPACE).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }
}
