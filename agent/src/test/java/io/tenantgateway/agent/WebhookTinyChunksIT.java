package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.AgentProcessTestBase;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A red-team shape issue 24's tests did not cover: one chunked AdmissionReview body sent as two million one-byte
 * HTTP/1.1 chunks (12 MB on the wire, a 2 MB body: under the body limit). Counting only the body's bytes, it
 * fitted the "webhook-bodies" account while the chunk buffers behind it ran the 64 MiB heap out within 1.1 million
 * chunks, in 2 s (exit 3). Each held chunk is now reserved with its overhead: the request is refused (429 or the
 * connection closed), the agent stays up, {@code /healthz} answers and a legitimate review is admitted afterwards.
 */
@Timeout(60)
class WebhookTinyChunksIT extends AgentProcessTestBase {
    private static final int CHUNKS = 2_000_000;

    @Test
    void aBodyOfOneByteChunksIsRefusedWithoutRunningTheHeapOut() throws Exception {
        testbed = new TunnelTestbed(dir);
        int port = TunnelTestbed.freePort();
        int health = TunnelTestbed.freePort();
        agent = AgentProcess.launch(testbed.webhookArgs(port, health));
        agent.awaitLine("webhook listening", Duration.ofSeconds(60));
        SSLContext tls = trusting();

        String answer;
        try (SSLSocket socket = connect(tls, port)) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /webhook HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] block = "1\r\n \r\n".repeat(10_000).getBytes(StandardCharsets.US_ASCII);
            try {
                for (int sent = 0; sent < CHUNKS; sent += 10_000) {
                    out.write(block);
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException refusedAndClosed) {
                // The webhook answered 429 and closed the connection while the chunks were still being sent.
            }
            answer = statusLine(socket.getInputStream());
        }
        assertThat(answer).as("the answer to a body of one-byte chunks (429, or the connection closed)")
                .isIn("HTTP/1.1 429 Too Many Requests", "");
        assertThat(agent.process.isAlive()).as("agent running; log:%n%s", String.join("\n", agent.log)).isTrue();
        assertThat(LoopbackHttp.get(health, "/healthz").statusCode()).isEqualTo(200);

        // The refused body's reservation is given back: a legitimate review is admitted.
        await().atMost(WAIT).untilAsserted(() -> assertThat(admit(tls, port)).isEqualTo(200));
        assertThat(agent.process.isAlive()).isTrue();
        assertThat(agent.lines("OutOfMemoryError")).isEmpty();
    }

    private SSLContext trusting() throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream ca = Files.newInputStream(testbed.files.caCert())) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(ca));
        }
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance("PKIX");
        trustManagers.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        return context;
    }

    private static SSLSocket connect(SSLContext tls, int port) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), (int) WAIT.toMillis());
        plain.setSoTimeout((int) WAIT.toMillis());
        SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket(plain, "localhost", port, true);
        socket.startHandshake();
        return socket;
    }

    private static int admit(SSLContext tls, int port) throws IOException {
        byte[] body = """
                {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",\
                "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1",\
                "resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"test"},\
                "object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},\
                "spec":{"containers":[{"name":"c","image":"busybox"}]}}}}""".getBytes(StandardCharsets.UTF_8);
        try (SSLSocket socket = connect(tls, port)) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /webhook HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            String status = statusLine(socket.getInputStream());
            return Integer.parseInt(status.split(" ")[1]);
        }
    }

    /** The status line, or "" when the connection was closed (or reset) before one arrived. */
    private static String statusLine(InputStream in) {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        try {
            for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
                if (c != '\r') {
                    line.write(c);
                }
            }
        } catch (IOException closed) {
            return "";
        }
        return line.toString(StandardCharsets.US_ASCII);
    }
}
