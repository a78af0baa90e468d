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

/**
 * {@link ConnectionGuard} on a plain-HTTP Vert.x server with short limits, driven by raw sockets. The short request
 * timeout is what is proven: each client it cuts never completes its request, so only the guard can end it, however
 * slow the machine; that it was the guard and not the 60 s idle timeout shows in the counter and in the cut coming
 * well before the idle timeout could have fired (no tighter bound on a busy machine).
 */
@Timeout(120)
class ConnectionGuardTest {
    /**
     * A 2 s request deadline (what is proven), long enough that a client sending its request right after connecting
     * never misses it, even on a loaded machine; a handshake deadline that never fires here (handshakes must finish).
     */
    private static final ServerLimits LIMITS = new ServerLimits(3, Duration.ofSeconds(30), Duration.ofSeconds(2),
            Duration.ofSeconds(60));
    /** Longer than anything here should take: a read lasts this long only when nothing closed the connection. */
    private static final Duration WAIT = LIMITS.idleTimeout();
    /**
     * A cut that came sooner than this was the request deadline's: the idle timeout had not fired yet. (Cuts are
     * also checked not to come before half the request deadline: the client's clock starts when its connect
     * returns, which a loaded machine can delay, so no tighter lower bound either.)
     */
    private static final long BEFORE_IDLE_MILLIS = LIMITS.idleTimeout().toMillis() / 2;

    private final Vertx vertx = Vertx.vertx();
    private ConnectionGuard guard;
    private int port;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        start(LIMITS);
    }

    /** (Re)starts the test's server and guard with {@code limits}. */
    private void start(ServerLimits limits) throws Exception {
        HttpServer server = vertx.createHttpServer(limits.applyTo(new HttpServerOptions().setHost("127.0.0.1")
                .setPort(0)));
        guard = new ConnectionGuard(vertx, "test server", limits);
        server.requestHandler(guard.install(server, request -> request.body().onSuccess(body -> request.response()
                .end("got " + body.length()))));
        port = server.listen().toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS)
                .actualPort();
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket socket : sockets) {
            socket.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private Socket connect() throws Exception {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout((int) WAIT.toMillis());
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
        assertThat(millis).isBetween(LIMITS.requestTimeout().toMillis() / 2, BEFORE_IDLE_MILLIS);
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
            // The client's pace is the stimulus here: a byte every 100 ms, slower than the 2 s budget allows.
            await().pollDelay(Duration.ofMillis(100)).until(() -> true);
            if (socket.getInputStream().available() < 0) {
                break;
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(cut || readToClose(socket).isEmpty()).isTrue();
        assertThat(millis).isLessThan(BEFORE_IDLE_MILLIS);
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
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(BEFORE_IDLE_MILLIS);
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
        int tlsPort = server.listen().toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS)
                .actualPort();
        javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
        context.init(null, new javax.net.ssl.TrustManager[] {io.tenantgateway.certs.TlsContexts.trustManager(pki.trustOnlyMaterial(),
                java.time.Clock.systemUTC())}, null);
        javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) context.getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), tlsPort);
        sockets.add(socket);
        socket.setSoTimeout((int) WAIT.toMillis());
        socket.startHandshake();
        long start = System.nanoTime();
        assertThat(readToClose(socket)).isEmpty();
        assertThat((System.nanoTime() - start) / 1_000_000).isBetween(LIMITS.requestTimeout().toMillis() / 2,
                BEFORE_IDLE_MILLIS);
        assertThat(tlsGuard.timedOutConnections()).isEqualTo(1);
    }

    @Test
    void connectionsBeyondTheCapAreClosed() throws Exception {
        start(LIMITS.withRequestTimeout(WAIT)); // the held connections stay while the test goes on, however slowly
        List<Socket> held = List.of(connect(), connect(), connect());
        await().atMost(WAIT).until(() -> guard.openConnections() == 3);
        Socket fourth = connect();
        assertThat(readToClose(fourth)).isEmpty();
        assertThat(guard.rejectedConnections()).isEqualTo(1);
        assertThat(held).allMatch(socket -> !socket.isClosed());
    }
}
