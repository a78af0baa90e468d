package io.tenantgateway.agent.ops;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.utils.ResponseProvider;
import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.server.AgentAuthenticator;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code tenant-gateway doctor} with the flags an agent runs with, against our Java konnectivity-server (token
 * auth) and fabric8's mock API server answering the SelfSubjectAccessReviews: a good setup passes, and each broken
 * input is caught by the right check with its fix.
 */
@Timeout(90)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnableKubernetesMockClient(crud = true, https = false)
class DoctorIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    static Path dir;

    private static final String NVIDIA_REGISTER = "hami.io/node-nvidia-register";
    private static final String HYGON_REGISTER = "hami.io/node-dcu-register";

    /** The HTTP status the mock API server answers SelfSubjectAccessReviews with (201: it reviews them). */
    private static final AtomicInteger REVIEW_STATUS = new AtomicInteger(201);

    /** Permission keys the mock API server answers allowed=false for. */
    private static final Set<String> DENIED = ConcurrentHashMap.newKeySet();

    private final TestPki pki = TestPki.create("doctor");
    private TestPki.Files files;
    private Path goodToken;
    private Path kubeconfig;
    private TunnelServer konnectivity;
    private final List<AutoCloseable> servers = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        files = pki.writeTo(Files.createDirectories(dir.resolve("pki")));
        goodToken = token("good", "system:konnectivity-server", Instant.now().plus(Duration.ofHours(1)));
        konnectivity = konnectivityServer("kas-0", pki.serverMaterial());
        kubeconfig = MockApiKubeconfig.write(dir, client);
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
                .andReply(new ResponseProvider<Object>() {
                    private Headers headers = new Headers.Builder().build();

                    @Override
                    public int getStatusCode(RecordedRequest request) {
                        return REVIEW_STATUS.get();
                    }

                    @Override
                    public Object getBody(RecordedRequest request) {
                        if (REVIEW_STATUS.get() != 201) {
                            return new StatusBuilder().withCode(REVIEW_STATUS.get()).withStatus("Failure")
                                    .withMessage(REVIEW_STATUS.get() == 403 ? "selfsubjectaccessreviews is forbidden"
                                            : "SelfSubjectAccessReview is invalid").build();
                        }
                        SelfSubjectAccessReview review = client.getKubernetesSerialization()
                                .unmarshal(request.getBody().readUtf8(), SelfSubjectAccessReview.class);
                        var attributes = review.getSpec().getResourceAttributes();
                        String key = (attributes.getGroup() == null || attributes.getGroup().isEmpty() ? "core"
                                : attributes.getGroup()) + "/" + attributes.getResource()
                                + (attributes.getSubresource() == null ? "" : "/" + attributes.getSubresource())
                                + ":" + attributes.getVerb();
                        boolean allowed = !DENIED.contains(key);
                        review.setStatus(new SubjectAccessReviewStatusBuilder().withAllowed(allowed)
                                .withReason(allowed ? "RBAC: allowed by ClusterRoleBinding tenant-gateway"
                                        : "no RBAC policy matched").build());
                        return review;
                    }

                    @Override
                    public Headers getHeaders() {
                        return headers;
                    }

                    @Override
                    public void setHeaders(Headers headers) {
                        this.headers = headers;
                    }
                }).always();
        // This node as HAMi's plugins registered it: NVIDIA's JSON and Hygon's legacy text.
        client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata()
                .withName("worker-1").addToAnnotations(NVIDIA_REGISTER, "[{\"id\":\"GPU-a\",\"index\":0,"
                        + "\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\","
                        + "\"mode\":\"hami-core\",\"health\":true}]")
                .addToAnnotations(HYGON_REGISTER, "DCU-b,4,65520,100,DCU-K100,0,true,0,hami-core:").endMetadata()
                .build()).create();
        client.configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder().withNewMetadata()
                .withName("hami-scheduler-device").endMetadata()
                .addToData("device-config.yaml", "nvidia:\n  resourceCountName: nvidia.com/gpu\n").build()).create();
    }

    @Test
    void hamisWebhookNextToOursFailsWithTheFix() {
        MutatingWebhookConfiguration hami = new MutatingWebhookConfigurationBuilder().withNewMetadata()
                .withName("hami-webhook").endMetadata().addNewWebhook().withName("vgpu.hami.io").withNewClientConfig()
                .withNewService().withName("hami-scheduler").withNamespace("kube-system").withPath("/webhook")
                .endService().endClientConfig().addNewRule().withApiGroups("").withApiVersions("v1")
                .withOperations("CREATE").withResources("pods").endRule().endWebhook().build();
        client.admissionRegistration().v1().mutatingWebhookConfigurations().resource(hami).create();
        try {
            CliRun result = doctor(goodFlags());

            assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
            assertThat(result.out()).containsPattern("FAIL  hami-webhook +MutatingWebhookConfiguration hami-webhook"
                            + " serves HAMi's webhook \\(entry vgpu.hami.io\\) next to tenant-gateway's")
                    .contains("fix: turn HAMi's webhook off: helm upgrade <release> hami-charts/hami --reuse-values"
                            + " --set scheduler.admissionWebhook.enabled=false (HAMi's chart), or kubectl delete"
                            + " mutatingwebhookconfiguration hami-webhook")
                    .contains("-> FAILED (exit 1)");
        } finally {
            client.admissionRegistration().v1().mutatingWebhookConfigurations().withName("hami-webhook").delete();
        }
    }

    @BeforeEach
    void allowEverything() {
        DENIED.clear();
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable closeable : servers) {
            closeable.close();
        }
    }

    private TunnelServer konnectivityServer(String id, TlsMaterial tls) throws Exception {
        TunnelServer started = new TunnelServer(TunnelServerConfig.builder(tls).serverId(id).serverCount(1)
                .agentAddress(new InetSocketAddress("127.0.0.1", 0))
                .agentAuthenticator(AgentAuthenticator.staticTokens(Set.of(Files.readString(goodToken).strip())))
                .udsPath(dir.resolve(id + ".socket")).eventLoopThreads(1).build());
        started.start();
        servers.add(started);
        return started;
    }

    /** A service-account-shaped JWT (unsigned: doctor never verifies, the server's TokenReview does). */
    private static Path token(String name, String audience, Instant expiry) throws Exception {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String header = b64.encodeToString("{\"alg\":\"RS256\",\"kid\":\"test\"}".getBytes(StandardCharsets.UTF_8));
        String payload = b64.encodeToString(("{\"aud\":[\"" + audience + "\"],\"exp\":" + expiry.getEpochSecond()
                + ",\"iat\":" + expiry.minus(Duration.ofHours(1)).getEpochSecond()
                + ",\"iss\":\"https://kubernetes.default.svc\",\"sub\":"
                + "\"system:serviceaccount:kube-system:konnectivity-agent\"}").getBytes(StandardCharsets.UTF_8));
        return Files.writeString(dir.resolve(name + ".token"), header + "." + payload + ".c2lnbmF0dXJl\n");
    }

    /** The flags of a GPU node's agent: token auth, webhook, mock devices (and so the lock controller). */
    private List<String> agentFlags(Path caCert, int port, Path tokenFile) {
        return new ArrayList<>(List.of("doctor", "--ca-cert=" + caCert, "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=" + port, "--service-account-token-path=" + tokenFile, "--agent-id=worker-1",
                "--node-name=worker-1", "--kubeconfig=" + kubeconfig, "--device-source=mock",
                "--mock-gpus=A100-80GB", "--mock-devices=Ascend910B4:1", "--webhook-tls-cert=" + files.serverCert(),
                "--webhook-tls-key=" + files.serverKey(), "-v=4", "--check-timeout=" + WAIT.toSeconds() + "s"));
    }

    private List<String> goodFlags() {
        return agentFlags(files.caCert(), konnectivity.agentAddress().getPort(), goodToken);
    }

    private static CliRun doctor(List<String> args) {
        CliRun result = CliRun.of(args.toArray(String[]::new));
        System.out.println("$ tenant-gateway " + String.join(" ", args) + "\n" + result.out() + result.err());
        return result;
    }

    @Test
    void goodSetupPasses() {
        CliRun result = doctor(goodFlags());

        assertThat(result.exitCode()).as(result.both()).isZero();
        assertThat(result.out()).contains("doctor: agent worker-1 on node worker-1, server 127.0.0.1:")
                .containsPattern("PASS  config +flags valid; parts: tunnel, devices, lock-controller, webhook")
                .containsPattern("PASS  ca-cert +.*ca\\.crt: 1 CA certificate")
                .containsPattern("SKIP  agent-cert +no --agent-cert")
                .containsPattern("PASS  token +.*JWT aud=\\[system:konnectivity-server\\] sub=system:serviceaccount:"
                        + "kube-system:konnectivity-agent exp=")
                .containsPattern("PASS  webhook-cert +.*'CN=doctor-server', key matches")
                .containsPattern("PASS  dns +127\\.0\\.0\\.1 is an IP address")
                .containsPattern("PASS  tcp +connected to 127\\.0\\.0\\.1:")
                .containsPattern("PASS  tls +TLSv1\\.3 ALPN h2, chain verified against --ca-cert, names include"
                        + " 127\\.0\\.0\\.1")
                .containsPattern("PASS  grpc-connect +/AgentService/Connect accepted: serverid=kas-0 servercount=1")
                .containsPattern("PASS  kubernetes +API http://.*: all [0-9]+ permissions the enabled parts use are"
                        + " allowed")
                .containsPattern("PASS  hami-webhook +no MutatingWebhookConfiguration other than"
                        + " tenant-gateway-hami-webhook serves HAMi's webhook \\([0-9]+ checked\\)")
                .containsPattern("PASS  device-config +ConfigMap kube-system/hami-scheduler-device:"
                        + " nvidia.resourceCountName=nvidia.com/gpu")
                .containsPattern("PASS  devices +mock: 1 GPU\\(s\\), Ascend910B4: 1")
                .containsPattern("Ascend910B4 \\[0\\] Ascend910B4 32768 MiB, split 4 \\([0-9A-F-]+\\) in"
                        + " hami.io/node-register-Ascend910B4")
                .containsPattern("PASS  registrations +2 registration\\(s\\) on node worker-1, as HAMi v2.10 reads"
                        + " them")
                .contains("hami.io/node-dcu-register: 1 device(s)", "[0] DCU-K100 65520 MiB, 100 cores, split 4 (DCU-b)",
                        "[0] NVIDIA A100-SXM4-80GB 81920 MiB, 100 cores, split 10 (GPU-a)")
                .contains("15 checks: 14 passed, 0 warnings, 0 failed, 1 skipped -> OK")
                .doesNotContain("fix:");
    }

    @Test
    void aRegistrationHamiCannotReadIsAWarningWithTheReadersMessage() {
        client.nodes().withName("worker-1").edit(node -> {
            node.getMetadata().getAnnotations().put(HYGON_REGISTER, "DCU-b,4,lots,100,DCU-K100,0,true,0,hami-core:");
            return node;
        });
        try {
            CliRun result = doctor(goodFlags());

            assertThat(result.exitCode()).as(result.both()).isZero();
            assertThat(result.out()).containsPattern("WARN  registrations +1 of 2 registration\\(s\\) on node"
                    + " worker-1, as HAMi v2.10 reads them do not decode")
                    .contains("hami.io/node-dcu-register: error: invalid memory field: strconv.ParseInt: parsing"
                            + " \"lots\": invalid syntax");
        } finally {
            client.nodes().withName("worker-1").edit(node -> {
                node.getMetadata().getAnnotations().put(HYGON_REGISTER,
                        "DCU-b,4,65520,100,DCU-K100,0,true,0,hami-core:");
                return node;
            });
        }
    }

    @Test
    void jsonChecklist() throws Exception {
        List<String> args = goodFlags();
        args.add(1, "--json");
        CliRun result = doctor(args);

        assertThat(result.exitCode()).as(result.both()).isZero();
        JsonNode report = JsonMapper.builder().build().readTree(result.out());
        assertThat(report.get("ok").asBoolean()).isTrue();
        assertThat(report.get("checks")).extracting(c -> c.get("name").asString() + "=" + c.get("outcome").asString())
                .containsExactly("config=pass", "ca-cert=pass", "agent-cert=skip", "token=pass", "webhook-cert=pass",
                        "dns=pass", "tcp=pass", "tls=pass", "grpc-connect=pass", "kubernetes=pass", "hami-webhook=pass",
                        "device-config=pass", "devices=pass", "monitor=pass", "registrations=pass");
    }

    @Test
    void expiredTokenIsCaught() throws Exception {
        Path expired = token("expired", "system:konnectivity-server", Instant.now().minus(Duration.ofHours(3)));
        CliRun result = doctor(agentFlags(files.caCert(), konnectivity.agentAddress().getPort(), expired));

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  token +.*expired\\.token: JWT aud=\\[system:konnectivity-server\\]"
                        + ".*: expired 3h0m ago")
                .contains("fix: the kubelet refreshes projected tokens before they expire: point"
                        + " --service-account-token-path at the projected volume (not a copy)")
                .containsPattern("SKIP  grpc-connect +no usable token")
                .contains("-> FAILED (exit 1)");
    }

    @Test
    void tokenForAnotherAudienceIsAWarning() throws Exception {
        Path wrongAudience = token("default-audience", "https://kubernetes.default.svc", Instant.now().plusSeconds(600));
        CliRun result = doctor(agentFlags(files.caCert(), konnectivity.agentAddress().getPort(), wrongAudience));

        assertThat(result.out()).containsPattern("WARN  token +.*aud=\\[https://kubernetes.default.svc\\].*: audience is"
                        + " not system:konnectivity-server")
                .contains("fix: set audience: system:konnectivity-server in the projected serviceAccountToken volume")
                // Our test server knows only the good token: the real handshake confirms the warning.
                .containsPattern("FAIL  grpc-connect +UNAUTHENTICATED")
                .contains("fix: the server refused the token: it must be a service-account token of"
                        + " kube-system/konnectivity-agent");
        assertThat(result.exitCode()).isEqualTo(1);
    }

    @Test
    void wrongCaIsCaught() {
        TestPki.Files other = TestPki.create("other-tenant").writeTo(dir.resolve("other-pki"));
        CliRun result = doctor(agentFlags(other.caCert(), konnectivity.agentAddress().getPort(), goodToken));

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  tls +certificate 'CN=doctor-server' issued by CN=doctor-ca is not"
                        + " signed by a trusted CA \\(trusted: \\[CN=other-tenant-ca\\]\\)")
                .contains("fix: --ca-cert must hold the CA that signed the server's certificate (on Kamaji the tenant"
                        + " cluster's CA")
                .contains("[0] CN=doctor-server issued by CN=doctor-ca")
                .containsPattern("SKIP  grpc-connect +no verified TLS connection");
    }

    @Test
    void wrongSanIsCaught() throws Exception {
        CertBundle narrow = pki.ca().issue(CertificateRequest.server("kas-narrow")
                .dnsNames("konnectivity.tenant-a.example").validity(Duration.ofDays(1)).build());
        TunnelServer narrowServer = konnectivityServer("kas-narrow", TlsMaterial.of(narrow, pki.trust()));
        CliRun result = doctor(agentFlags(files.caCert(), narrowServer.agentAddress().getPort(), goodToken));

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  tls +certificate 'CN=kas-narrow' does not match the name"
                        + " '127\\.0\\.0\\.1' \\(its names: \\[DNS:konnectivity\\.tenant-a\\.example\\]\\)")
                .contains("fix: the agent checks --proxy-server-host against the server certificate: use a name or IP"
                        + " the certificate lists, or add 127.0.0.1 to it (Kamaji: spec.networkProfile.certSANs");
    }

    @Test
    void clientCertificateFromAnotherCaIsCaught() throws Exception {
        TunnelServer mtls = new TunnelServer(TunnelServerConfig.builder(pki.serverMaterial()).serverId("kas-mtls")
                .serverCount(1).agentAddress(new InetSocketAddress("127.0.0.1", 0))
                .agentClientAuth(ClientAuthMode.REQUIRE).udsPath(dir.resolve("kas-mtls.socket")).eventLoopThreads(1)
                .build());
        mtls.start();
        servers.add(mtls);
        TestPki.Files stranger = TestPki.create("stranger").writeTo(dir.resolve("stranger-pki"));
        CliRun result = doctor(List.of("doctor", "--ca-cert=" + files.caCert(), "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=" + mtls.agentAddress().getPort(), "--agent-cert=" + stranger.clientCert(),
                "--agent-key=" + stranger.clientKey()));

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out())
                .containsPattern("PASS  agent-cert +.*'CN=stranger-client,O=system:masters', key matches")
                .containsPattern("SKIP  token +no --service-account-token-path \\(mTLS with --agent-cert\\)")
                .containsPattern("FAIL  tls +the server ended the connection after the handshake: .*alert")
                .contains("fix: the server refused the client certificate: --agent-cert must be signed by the"
                        + " server's --cluster-ca-cert")
                .containsPattern("SKIP  grpc-connect +no verified TLS connection");
    }

    @Test
    void unreachableServerIsCaught() throws Exception {
        int port = TunnelTestbed.freePort();
        CliRun result = doctor(agentFlags(files.caCert(), port, goodToken));

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  tcp +cannot connect to 127\\.0\\.0\\.1:" + port
                        + ": Connection refused")
                .contains("fix: nothing accepts connections there: check --proxy-server-port (Kamaji: 8132")
                .containsPattern("SKIP  tls +no connection \\(tcp failed\\)")
                .containsPattern("SKIP  grpc-connect");
    }

    @Test
    void anApiServerThatAnswersButReviewsNoPermissionsIsAWarningAndTheChecksGoOn() {
        REVIEW_STATUS.set(422); // what fabric8's CRUD mock (the lab's API server) answers
        try {
            CliRun result = doctor(goodFlags());

            assertThat(result.out()).containsPattern("WARN  kubernetes +API http://.* answered, but not a"
                            + " SelfSubjectAccessReview \\(HTTP 422: SelfSubjectAccessReview is invalid\\), so the [0-9]+"
                            + " permissions the enabled parts use were not checked")
                    .contains("fix: nothing to fix if this API server has no authorization API")
                    .containsPattern("PASS  registrations +2 registration\\(s\\) on node worker-1")
                    .containsPattern("PASS  device-config +ConfigMap kube-system/hami-scheduler-device");
            assertThat(result.exitCode()).as(result.both()).isZero();
        } finally {
            REVIEW_STATUS.set(201);
        }
    }

    @Test
    void anIdentityThatMayNotReviewIsForbiddenWithTheRbacFix() {
        REVIEW_STATUS.set(403);
        try {
            CliRun result = doctor(goodFlags());

            assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
            assertThat(result.out()).containsPattern("FAIL  kubernetes +API http://.*: HTTP 403: selfsubjectaccessreviews"
                            + " is forbidden")
                    .contains("fix: this identity may not even create SelfSubjectAccessReviews")
                    .containsPattern("SKIP  registrations +the Kubernetes API check failed");
        } finally {
            REVIEW_STATUS.set(201);
        }
    }

    @Test
    void anUnreachableApiServerIsNamedWithItsAddress() throws Exception {
        int closed = TunnelTestbed.freePort();
        Path unreachable = dir.resolve("unreachable-kubeconfig");
        Files.writeString(unreachable, Files.readString(kubeconfig).replaceAll("http://[^\\s\"']+",
                "http://127.0.0.1:" + closed));
        List<String> args = goodFlags();
        args.replaceAll(arg -> arg.startsWith("--kubeconfig=") ? "--kubeconfig=" + unreachable : arg);
        CliRun result = doctor(args);

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  kubernetes +API http://127\\.0\\.0\\.1:" + closed + "/?: no answer")
                .contains("fix: check the API server address (http://127.0.0.1:" + closed)
                .containsPattern("SKIP  registrations +the Kubernetes API check failed");
    }

    @Test
    void missingRbacIsCaught() {
        DENIED.addAll(Set.of("core/nodes/status:patch", "core/pods:patch"));
        List<String> args = goodFlags();
        args.add("--device-plugin=true"); // its Allocate patches pods
        args.add("--device-plugin-dir=" + dir);
        CliRun result = doctor(args);

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out()).containsPattern("FAIL  kubernetes +2 of [0-9]+ permissions denied")
                .contains("denied: core/nodes/status:patch (mock capacity, node capacity: advertise nvidia.com/gpu"
                        + " capacity (mock mode); --report-node-capacity: nvidia.com/gpumem and gpucores totals (own"
                        + " node only: ValidatingAdmissionPolicy tenant-gateway-own-node)) - no RBAC policy matched")
                .contains("denied: core/pods:patch (device plugin: Allocate: consume device entries, set"
                        + " hami.io/bind-phase)")
                .contains("fix: grant them to the agent's service account: apply the manifests for this mode"
                        + " (manifests/base, plus components/device-plugin for pods patch,"
                        + " components/mock-capacity or components/report-node-capacity for nodes/status patch")
                .containsPattern("PASS  grpc-connect")
                // Nobody serves the plugin socket yet, and this directory has no kubelet.sock.
                .containsPattern("WARN  device-plugin +nobody serves .*nvidia-gpu\\.sock yet \\(the agent does once it"
                        + " runs\\); no .*kubelet\\.sock");
    }

    @Test
    void configTheAgentWouldRejectIsTheFirstFailure() {
        List<String> args = goodFlags();
        args.add("--keepalive-time=0s");
        args.add("--warn-on-channel-limit");
        CliRun result = doctor(args);

        assertThat(result.exitCode()).as(result.both()).isEqualTo(1);
        assertThat(result.out())
                .containsPattern("WARN  flags +--warn-on-channel-limit=true: accepted, not implemented yet \\(no effect\\)")
                .containsPattern("FAIL  config +--keepalive-time: 0s \\(expected: > 0\\)")
                .contains("2 checks: 0 passed, 1 warnings, 1 failed, 0 skipped");
    }

    @Test
    void unknownFlagExitsTwoAsRunDoes() {
        List<String> args = goodFlags();
        args.add("--some-future-flag=1");
        CliRun result = doctor(args);

        assertThat(result.exitCode()).as(result.both()).isEqualTo(2);
        assertThat(result.err().strip()).isEqualTo("error: unknown flag: --some-future-flag");
    }
}
