package io.tenantgateway.webhook;

import static io.tenantgateway.webhook.WebhookFixture.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.vertx.ServerLimits;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.vertx.VertxTls;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the webhook (which runs with {@code failurePolicy: Fail}) holds at most: TLS 1.2 only with ECDHE + AEAD
 * suites (checked with the real {@code openssl s_client}), HTTP/2 to clients that offer it, and a slowloris attack
 * of 400 connections trickling a byte a second cut within the request timeout while a real review is answered.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WebhookLimitsIT {
    /** Static-RSA key exchange, CBC and SHA-1/SHA-256 MAC suites: refused (OpenSSL's names). */
    private static final List<String> WEAK = List.of("AES128-SHA", "AES256-SHA", "AES128-SHA256", "AES128-GCM-SHA256");

    @AutoClose
    private final WebhookFixture fixture = new WebhookFixture();

    /** A server identity with an RSA key: the only kind static-RSA suites could be negotiated with at all. */
    private TlsMaterial rsaServer() {
        CertificateAuthority ca = CertificateAuthority.create("limits-rsa-ca", KeyAlgorithm.RSA_2048,
                Duration.ofDays(1), Clock.systemUTC());
        CertBundle server = ca.issue(CertificateRequest.server("limits-rsa-server").ipAddresses("127.0.0.1")
                .keyAlgorithm(KeyAlgorithm.RSA_2048).validity(Duration.ofDays(1)).build());
        return TlsMaterial.of(server, ca.trustBundle());
    }

    private WebhookServer startWith(TlsMaterial material) {
        WebhookServer server = WebhookServer.builder(WebhookFixture.loopback().build()).serverTls(material)
                .deviceConfig(io.tenantgateway.webhook.policy.DeviceConfig.defaults())
                .registry(new io.prometheus.metrics.model.registry.PrometheusRegistry()).vertx(fixture.vertx)
                .build();
        server.start();
        fixture.register(server);
        return server;
    }

    @ParameterizedTest
    @ValueSource(strings = {"rsa", "ec"})
    void tls12OffersOnlyEcdheWithAead(String key) throws Exception {
        WebhookServer server = startWith(key.equals("rsa") ? rsaServer() : fixture.pki.serverMaterial());
        for (String weak : WEAK) {
            SClient result = sClient(server.port(), "-tls1_2", "-cipher", weak);
            assertThat(result.negotiated()).as("%s key, TLS 1.2 with %s only:%n%s", key, weak, result.output)
                    .isFalse();
        }
        String good = key.equals("rsa") ? "ECDHE-RSA-AES128-GCM-SHA256" : "ECDHE-ECDSA-AES128-GCM-SHA256";
        SClient ecdhe = sClient(server.port(), "-tls1_2", "-cipher", good);
        assertThat(ecdhe.negotiated()).as("TLS 1.2 with %s:%n%s", good, ecdhe.output).isTrue();
        assertThat(ecdhe.output).contains("Cipher is " + good);
        SClient tls13 = sClient(server.port(), "-tls1_3");
        assertThat(tls13.negotiated()).as("TLS 1.3:%n%s", tls13.output).isTrue();
        SClient tls11 = sClient(server.port(), "-tls1_1");
        assertThat(tls11.negotiated()).as("TLS 1.1:%n%s", tls11.output).isFalse();
    }

    @Test
    void alpnNegotiatesHttp2WhenOfferedAndHttp11Otherwise() throws Exception {
        WebhookServer server = fixture.start(WebhookFixture.loopback().build());
        assertThat(sClient(server.port(), "-alpn", "h2,http/1.1").output).contains("ALPN protocol: h2");
        assertThat(sClient(server.port(), "-alpn", "http/1.1").output).contains("ALPN protocol: http/1.1");

        // A real HTTP/2 admission, as kube-apiserver sends when the webhook offers h2.
        HttpClientOptions options = VertxTls.configureClient(new HttpClientOptions(), fixture.pki.trustOnlyMaterial(),
                Clock.systemUTC()).setProtocolVersion(HttpVersion.HTTP_2).setUseAlpn(true);
        var client = fixture.vertx.createHttpClient(options);
        try {
            Buffer body = Buffer.buffer(Pods.JSON.writeValueAsBytes(Reviews.podCreate(gpuPod())));
            CompletableFuture<String> version = client.request(new RequestOptions().setMethod(HttpMethod.POST)
                            .setHost("127.0.0.1").setPort(server.port()).setURI("/webhook")
                            .putHeader("Content-Type", "application/json"))
                    .compose(request -> request.send(body))
                    .compose(response -> response.body().map(ignored -> response.version() + " "
                            + response.statusCode()))
                    .toCompletionStage().toCompletableFuture();
            assertThat(version.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("HTTP_2 200");
        } finally {
            client.close();
        }
    }

    @Test
    void slowlorisConnectionsAreCutWithinTheRequestTimeoutWhileReviewsAreAnswered() throws Exception {
        WebhookServer server = fixture.start(WebhookFixture.loopback().build());
        Duration timeout = ServerLimits.DEFAULTS.requestTimeout();
        NetClient net = fixture.vertx.createNetClient(VertxTls.configureClient(new NetClientOptions(),
                fixture.pki.trustOnlyMaterial(), Clock.systemUTC()).setHostnameVerificationAlgorithm(""));
        byte[] request = ("POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100000\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        int attackers = 400;
        List<NetSocket> sockets = new ArrayList<>();
        AtomicInteger closed = new AtomicInteger();
        List<Long> closedAfterMillis = java.util.Collections.synchronizedList(new ArrayList<>());
        long started = System.nanoTime();
        for (int i = 0; i < attackers; i++) {
            NetSocket socket = net.connect(server.port(), "127.0.0.1").toCompletionStage().toCompletableFuture()
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
            long connected = System.nanoTime();
            socket.closeHandler(ignored -> {
                closed.incrementAndGet();
                closedAfterMillis.add((System.nanoTime() - connected) / 1_000_000);
            });
            sockets.add(socket);
        }
        long connectedAll = (System.nanoTime() - started) / 1_000_000;
        // One byte a second per connection: half of them still in the headers, half already in the body.
        AtomicInteger tick = new AtomicInteger();
        long timer = fixture.vertx.setPeriodic(0, 1000, id -> {
            int t = tick.getAndIncrement();
            for (int i = 0; i < sockets.size(); i++) {
                NetSocket socket = sockets.get(i);
                if (i % 2 == 0) {
                    if (t < request.length) {
                        socket.write(Buffer.buffer(new byte[] {request[t]}));
                    }
                } else {
                    socket.write(t == 0 ? Buffer.buffer(request) : Buffer.buffer("{"));
                }
            }
        });
        try {
            // A real review during the attack.
            AdmissionClient.Admission admission = fixture.client.admit(server.port(), Reviews.podCreate(gpuPod()));
            assertThat(admission.reply().status()).isEqualTo(200);
            await().atMost(timeout.plus(WAIT)).until(() -> closed.get() == attackers);
            long slowest = closedAfterMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
            System.out.printf("slowloris: %d of %d connections cut, each at most %d ms after it connected"
                    + " (request timeout %d ms; all connected within %d ms)%n", closed.get(), attackers, slowest,
                    timeout.toMillis(), connectedAll);
            // Each was cut by the request deadline (the guard's count), none by the idle timeout: the trickle resets
            // it. How late after the deadline is the machine's business (printed above), not the webhook's.
            assertThat(server.connections().orElseThrow().timedOutConnections()).isGreaterThanOrEqualTo(attackers);
            // A new connection, as a caller after the attack would open: the first review's kept-alive connection
            // sat idle past the request deadline meanwhile, and the server may be closing it as it is reused.
            try (AdmissionClient fresh = new AdmissionClient(fixture.vertx, fixture.pki.trustOnlyMaterial())) {
                assertThat(fresh.admit(server.port(), Reviews.podCreate(gpuPod())).reply().status()).isEqualTo(200);
            }
        } finally {
            fixture.vertx.cancelTimer(timer);
            net.close();
        }
    }

    private static tools.jackson.databind.node.ObjectNode gpuPod() {
        return Pods.pod("gpu").container(Pods.container("cuda").gpu("1")).build();
    }

    /** What {@code openssl s_client} printed, and whether a handshake completed. */
    record SClient(String output) {
        boolean negotiated() {
            return output.contains("New, TLS") || output.matches("(?s).*Cipher is (?!\\(NONE\\)).*");
        }
    }

    private static SClient sClient(int port, String... options) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("openssl", "s_client", "-connect", "127.0.0.1:" + port,
                "-servername", "localhost"));
        command.addAll(List.of(options));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close(); // EOF on stdin: s_client handshakes, prints, and exits
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = process.getInputStream()) {
            in.transferTo(out);
        }
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new SClient(out.toString(StandardCharsets.UTF_8));
    }
}
