package io.tenantgateway.agent.cli;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.agent.webhook.WebhookSettings;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.webhook.WebhookServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tenant-gateway webhook}: flags and files are checked up front (exit 2, one line), then it serves. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WebhookCommandTest {
    @TempDir
    Path dir;
    TestPki pki;
    TestPki.Files files;

    @BeforeEach
    void writePki() {
        pki = TestPki.create("cli");
        files = pki.writeTo(dir);
    }

    CliRun webhook(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "webhook";
        System.arraycopy(args, 0, all, 1, args.length);
        return CliRun.of(all);
    }

    /** Exit 2 with exactly one line on stderr carrying the message. */
    static void assertUsageError(CliRun run, String message) {
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        String firstLine = run.err().lines().findFirst().orElse("");
        assertThat(firstLine).contains(message);
        assertThat(run.err()).doesNotContain("\tat ");
    }

    @Test
    void noServingCertificateIsAUsageError() {
        String expected = " (expected: --tls-cert and --tls-key, or --webhook-tls-secret)";
        assertUsageError(webhook(), "error: --tls-cert: missing" + expected);
        assertUsageError(webhook("--tls-key", files.serverKey().toString()), "error: --tls-cert: missing" + expected);
        assertUsageError(webhook("--tls-cert", files.serverCert().toString()), "error: --tls-key: missing" + expected);
        assertUsageError(webhook("--webhook-tls-key", files.serverKey().toString()), "error: --tls-cert: missing"
                + " (expected: --tls-cert and --webhook-tls-key, or --webhook-tls-secret)");
    }

    @Test
    void missingFilesAreNamed() {
        Path nope = dir.resolve("nope.crt");
        assertUsageError(webhook("--tls-cert", nope.toString(), "--tls-key", files.serverKey().toString()),
                "error: --tls-cert: " + nope + ": file not found");
        assertUsageError(webhook("--webhook-tls-cert", nope.toString(), "--webhook-tls-key",
                files.serverKey().toString()), "error: --webhook-tls-cert: " + nope + ": file not found");
        assertUsageError(webhook("--tls-cert", files.serverCert().toString(), "--tls-key",
                files.serverKey().toString(), "--device-config", dir.resolve("dc.yaml").toString()),
                "error: --device-config: " + dir.resolve("dc.yaml") + ": file not found");
        assertUsageError(webhook("--tls-cert", files.serverCert().toString(), "--tls-key",
                files.serverKey().toString(), "--client-ca", dir.toString()), "error: --client-ca: " + dir
                + ": not a regular file");
    }

    @Test
    void unreadableCertificateIsAUsageError() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage.crt"), "not a certificate\n");
        CliRun run = webhook("--listen", "127.0.0.1:0", "--tls-cert", garbage.toString(), "--tls-key",
                files.serverKey().toString());
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err().lines().findFirst().orElse("")).contains("garbage.crt");
    }

    @Test
    void listenPortInUseIsAUsageErrorNamingTheFlag() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            CliRun run = webhook("--listen", "127.0.0.1:" + busy.getLocalPort(), "--tls-cert",
                    files.serverCert().toString(), "--tls-key", files.serverKey().toString());
            assertUsageError(run, "error: --listen: 127.0.0.1:" + busy.getLocalPort() + " is in use");
            assertThat(run.err().strip()).isEqualTo("error: --listen: 127.0.0.1:" + busy.getLocalPort() + " is in use");
        }
    }

    @Test
    void badFlagValuesAreUsageErrors() throws Exception {
        String cert = files.serverCert().toString();
        String key = files.serverKey().toString();
        assertUsageError(webhook("--listen", "nine", "--tls-cert", cert, "--tls-key", key),
                "error: --listen: nine (expected: HOST:PORT, [IPv6]:PORT, :PORT or PORT, e.g. 0.0.0.0:9443)");
        assertUsageError(webhook("--webhook-listen", "fd00::1:9443", "--tls-cert", cert, "--tls-key", key),
                "error: --webhook-listen: fd00::1:9443 (expected: HOST:PORT, [IPv6]:PORT");
        assertUsageError(webhook("--max-connections", "0", "--tls-cert", cert, "--tls-key", key),
                "error: --max-connections: 0 (expected: >= 1)");
        assertUsageError(webhook("--listen", "0.0.0.0:99999", "--tls-cert", cert, "--tls-key", key),
                "error: --listen: port 99999 (expected: 0..65535)");
        assertUsageError(webhook("--hami-compat", "v3", "--tls-cert", cert, "--tls-key", key),
                "error: --hami-compat: 'v3' (expected: one of v2.10, v2.9)");
        assertUsageError(webhook("--scheduler-name", "Bad Name", "--tls-cert", cert, "--tls-key", key),
                "error: --scheduler-name: 'Bad Name' (expected: a DNS subdomain such as hami-scheduler, or \"\" to"
                        + " leave schedulerName alone)");
        assertUsageError(webhook("--upstream", "https://hami-scheduler.kube-system.svc/webhook", "--tls-cert", cert,
                "--tls-key", key), "error: --upstream-ca: missing (expected: the CA file that signs the certificate"
                + " of https://hami-scheduler.kube-system.svc/webhook)");
        assertUsageError(webhook("--upstream", "http://hami/webhook", "--upstream-ca", files.caCert().toString(),
                "--tls-cert", cert, "--tls-key", key), "error: --upstream: 'http://hami/webhook' (expected: an"
                + " https:// URL with a host");
        assertUsageError(webhook("--upstream", "https://hami/webhook", "--upstream-ca", files.caCert().toString(),
                "--upstream-timeout", "12s", "--tls-cert", cert, "--tls-key", key),
                "error: --upstream-timeout: 12s (expected: > 0 and < 10s");
        assertUsageError(webhook("--upstream", "https://hami/webhook", "--upstream-ca", files.caCert().toString(),
                "--upstream-timeout", "soon", "--tls-cert", cert, "--tls-key", key),
                "error: --upstream-timeout: soon (expected: a duration such as 5m");
        assertUsageError(webhook("--upstream", "https://hami/webhook", "--upstream-ca", files.caCert().toString(),
                "--upstream-failure-policy", "retry", "--tls-cert", cert, "--tls-key", key),
                "error: --upstream-failure-policy: 'retry' (expected: one of fail-closed, fail-open, fallback)");
        assertUsageError(webhook("--upstream-ca", files.caCert().toString(), "--tls-cert", cert, "--tls-key", key),
                "error: --upstream-ca: given without --upstream (expected: both or neither)");
        Path badConfig = Files.writeString(dir.resolve("device-config.yaml"), "nvidia:\n  defaultGPUNum: many\n");
        assertUsageError(webhook("--device-config", badConfig.toString(), "--tls-cert", cert, "--tls-key", key),
                "error: --device-config " + badConfig + ": nvidia.defaultGPUNum: 'many' (expected: a whole number)");
    }

    /** The command's own names and run's names for the same flags: the standalone's win when both are given. */
    WebhookCommand parsed(String... args) {
        WebhookCommand command = new WebhookCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    @Test
    void takesRunsWebhookFlagsAndKeepsItsOwnNames() {
        String cert = files.serverCert().toString();
        String key = files.serverKey().toString();
        WebhookSettings own = parsed("--listen", "127.0.0.1:8443", "--max-connections", "7", "--tls-cert", cert,
                "--tls-key", key, "--client-ca", files.caCert().toString(), "--no-force-overwrite-default-scheduler",
                "--upstream", "https://hami/webhook", "--upstream-ca", files.caCert().toString(), "--upstream-path",
                "/hami").config();
        assertThat(own.config().host()).isEqualTo("127.0.0.1");
        assertThat(own.config().port()).isEqualTo(8443);
        assertThat(own.config().limits().maxConnections()).isEqualTo(7);
        assertThat(own.config().policy().forceOverwriteDefaultScheduler()).isFalse();
        assertThat(own.config().upstream()).hasValueSatisfying(u -> assertThat(u.path()).isEqualTo("/hami"));
        assertThat(own.tlsCert()).contains(files.serverCert());
        assertThat(own.clientCa()).contains(files.caCert());

        WebhookSettings runs = parsed("--webhook-listen", "9443", "--webhook-max-connections", "8",
                "--webhook-tls-cert", cert, "--webhook-tls-key", key, "--webhook-client-ca",
                files.caCert().toString(), "--force-overwrite-default-scheduler=false").config();
        assertThat(runs.config().host()).isEqualTo("0.0.0.0");
        assertThat(runs.config().port()).isEqualTo(9443);
        assertThat(runs.config().limits().maxConnections()).isEqualTo(8);
        assertThat(runs.config().policy().forceOverwriteDefaultScheduler()).isFalse();
        assertThat(runs.tlsKey()).contains(files.serverKey());

        WebhookSettings defaults = parsed("--tls-cert", cert, "--tls-key", key).config();
        assertThat(defaults.config().host()).isEqualTo("0.0.0.0");
        assertThat(defaults.config().port()).isEqualTo(9443);
        assertThat(defaults.config().limits().maxConnections()).isEqualTo(1024);
        assertThat(defaults.config().policy().forceOverwriteDefaultScheduler()).isTrue();
        assertThat(defaults.deviceConfigMap()).contains("kube-system/hami-scheduler-device");

        assertThat(parsed("--listen", "[::1]:1", "--webhook-listen", "127.0.0.1:2", "--tls-cert", cert, "--tls-key",
                key).config().config().host()).isEqualTo("::1");
    }

    @Test
    void secretSelfManagedAndManagedConfigurationNeedTheApi() {
        String cert = files.serverCert().toString();
        String key = files.serverKey().toString();
        // As run's webhook: a Secret is a serving certificate; it is read through the API (WebhookSelfManagedIT).
        assertThat(parsed("--webhook-tls-secret", "kube-system/webhook-tls").config().tlsSecret())
                .contains("kube-system/webhook-tls");
        assertUsageError(webhook("--webhook-tls-secret", "kube-system/webhook-tls"), "error: --webhook-tls-secret:"
                + " kube-system/webhook-tls (expected: --kubeconfig, or running in a pod: the API is how the webhook"
                + " reads its Secret)");
        assertUsageError(webhook("--tls-cert", cert, "--tls-key", key, "--manage-webhook-config",
                "--webhook-ca-bundle", files.caCert().toString()), "error: --manage-webhook-config: true (expected:"
                + " --kubeconfig, or running in a pod: the API is how the webhook reads its"
                + " MutatingWebhookConfiguration)");
        assertUsageError(webhook("--webhook-tls-secret", "kube-system/webhook-tls", "--webhook-tls-self-managed"),
                "error: --webhook-tls-secret: kube-system/webhook-tls (expected: --kubeconfig, or running in a pod:");
        assertUsageError(webhook("--webhook-tls-self-managed", "--tls-cert", cert, "--tls-key", key),
                "error: --webhook-tls-self-managed: true without --webhook-tls-secret");
        assertUsageError(webhook("--tls-cert", cert, "--tls-key", key, "--enable-webhook=false"),
                "error: --enable-webhook: false (expected: true: tenant-gateway webhook always serves it)");
    }

    @Test
    void servesAdmissionsUntilStopped() throws Exception {
        Path deviceConfig = Files.writeString(dir.resolve("device-config.yaml"),
                "nvidia:\n  resourceCountName: nvidia.com/gpu\n  gpuCorePolicy: force\n");
        WebhookInBackground command = WebhookInBackground.start("--listen", "127.0.0.1:0",
                "--tls-cert", files.serverCert().toString(), "--tls-key", files.serverKey().toString(),
                "--device-config", deviceConfig.toString(), "--hami-compat", "v2.9");
        WebhookServer server = command.started(30);

        HttpResponse<String> response = post(server.port(), """
                {"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u-1",
                 "kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"team-a",
                 "object":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",
                  "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}""");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"apiVersion\":\"admission.k8s.io/v1beta1\"", "\"uid\":\"u-1\"",
                "\"allowed\":true", "\"patchType\":\"JSONPatch\"");
        String patch = new String(Base64.getDecoder().decode(response.body().replaceAll(".*\"patch\":\"([^\"]+)\".*",
                "$1")), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(patch).contains("\"path\":\"/spec/schedulerName\",\"value\":\"hami-scheduler\"",
                "GPU_CORE_UTILIZATION_POLICY");
        assertThat(command.out()).contains("webhook listening on https://127.0.0.1:" + server.port()
                + "/webhook (HAMi v2.9, scheduler hami-scheduler)",
                "quota check: off (no --kubeconfig and not in a pod: no ResourceQuota lookup)");

        assertThat(command.stop()).as(command.err()).isZero();
    }

    HttpResponse<String> post(int port, String body) throws Exception {
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, new TrustManager[] {TlsContexts.trustManager(pki.trustOnlyMaterial(), Clock.systemUTC())},
                null);
        HttpClient client = HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(WAIT).build();
        return client.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/webhook"))
                .header("Content-Type", "application/json").timeout(WAIT)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
