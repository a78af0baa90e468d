package io.tenantgateway.certs.vertx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ConnectionGuard} on a plain-HTTP Vert.x server with short limits, driven by raw sockets. */
@Timeout(60)
class ConnectionGuardTest {
    private static final ServerLimits LIMITS = new ServerLimits(3, Duration.ofSeconds(1), Duration.ofMillis(700),
            Duration.ofSeconds(30));

    private final Vertx vertx = Vertx.vertx();
    private ConnectionGuard guard;
    private int port;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        HttpServer server = vertx.createHttpServer(LIMITS.applyTo(new HttpServerOptions().setHost("127.0.0.1")
                .setPort(0)));
        guard = new ConnectionGuard(vertx, "test server", LIMITS);
        server.requestHandler(guard.install(server, request -> request.body().onSuccess(body -> request.response()
                .end("got " + body.length()))));
        port = server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket socket : sockets) {
            socket.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private Socket connect() throws Exception {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout(10_000);
        sockets.add(socket);
        return socket;
    }

    /** Reads until the server closes the connection; returns what arrived. */
    private static String readToClose(Socket socket) throws Exception {
        InputStream in = socket.getInputStream();
        return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheRequestTimeout() throws Exception {
        Socket socket = connect();
        long start = System.nanoTime();
        assertThat(readToClose(socket)).isEmpty();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).isBetween(500L, 3000L);
        assertThat(guard.timedOutConnections()).isEqualTo(1);
    }

    @Test
    void headersTrickledByteByByteAreCut() throws Exception {
        Socket socket = connect();
        OutputStream out = socket.getOutputStream();
        long start = System.nanoTime();
        byte[] request = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".getBytes(StandardCharsets.US_ASCII);
        boolean cut = false;
        for (byte b : request) {
            try {
                out.write(b);
                out.flush();
            } catch (java.io.IOException e) {
                cut = true;
                break;
            }
            // The client's pace is the stimulus here: a byte every 100 ms, slower than the 700 ms budget allows.
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
            if (socket.getInputStream().available() < 0) {
                break;
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(cut || readToClose(socket).isEmpty()).isTrue();
        assertThat(millis).isLessThan(3000L);
    }

    @Test
    void aBodyThatNeverEndsIsCutAndAFullRequestIsAnswered() throws Exception {
        Socket slow = connect();
        slow.getOutputStream().write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab"
                .getBytes(StandardCharsets.US_ASCII));
        Socket fine = connect();
        fine.getOutputStream().write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
                .getBytes(StandardCharsets.US_ASCII));
        assertThat(readToClose(fine)).startsWith("HTTP/1.1 200").endsWith("got 3");
        long start = System.nanoTime();
        readToClose(slow);
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(3000L);
    }

    @Test
    void aTlsConnectionThatSendsNothingAfterTheHandshakeIsClosed() throws Exception {
        io.tenantgateway.certs.testing.TestPki pki = io.tenantgateway.certs.testing.TestPki.create("guard");
        HttpServerOptions options = VertxTls.configureServer(LIMITS.applyTo(new HttpServerOptions()
                .setHost("127.0.0.1").setPort(0).setUseAlpn(true).setAlpnVersions(List.of(
                        io.vertx.core.http.HttpVersion.HTTP_2, io.vertx.core.http.HttpVersion.HTTP_1_1))),
                pki.serverMaterial(), io.tenantgateway.certs.ClientAuthMode.NONE, java.time.Clock.systemUTC());
        HttpServer server = vertx.createHttpServer(options);
        ConnectionGuard tlsGuard = new ConnectionGuard(vertx, "tls server", LIMITS);
        server.requestHandler(tlsGuard.install(server, request -> request.response().end("ok")));
        int tlsPort = server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS)
                .actualPort();
        javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] {io.tenantgateway.certs.TlsContexts.trustManager(pki.trustOnlyMaterial(),
                java.time.Clock.systemUTC())}, null);
        javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) context.getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), tlsPort);
        sockets.add(socket);
        socket.setSoTimeout(10_000);
        socket.startHandshake();
        long start = System.nanoTime();
        assertThat(readToClose(socket)).isEmpty();
        assertThat((System.nanoTime() - start) / 1_000_000).isBetween(300L, 3000L);
        assertThat(tlsGuard.timedOutConnections()).isEqualTo(1);
    }

    @Test
    void connectionsBeyondTheCapAreClosed() throws Exception {
        List<Socket> held = List.of(connect(), connect(), connect());
        await().until(() -> guard.openConnections() == 3);
        Socket fourth = connect();
        assertThat(readToClose(fourth)).isEmpty();
        assertThat(guard.rejectedConnections()).isEqualTo(1);
        assertThat(held).allMatch(socket -> !socket.isClosed());
    }
}
