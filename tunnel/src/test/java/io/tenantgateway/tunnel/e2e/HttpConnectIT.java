package io.tenantgateway.tunnel.e2e;

import static io.tenantgateway.tunnel.testing.TunnelHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.server.FrontendMode;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.testing.FullListener;
import io.tenantgateway.tunnel.testing.Payload;
import io.tenantgateway.tunnel.testing.TargetServer;
import io.tenantgateway.tunnel.testing.TunnelHarness;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code --mode http-connect}: CONNECT, 200, then raw bytes; dial errors become 502/503/504. */
@Timeout(90)
class HttpConnectIT {
    @RegisterExtension
    final TunnelHarness harness = new TunnelHarness();


    private TunnelServer server() {
        return harness.startServer(TunnelHarness.serverConfig("connect").mode(FrontendMode.HTTP_CONNECT)
                .frontendAddress(new InetSocketAddress("127.0.0.1", 0)).build());
    }

    @Test
    void tunnelsRawBytesAfterConnect() throws Exception {
        TunnelServer server = server();
        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server).build());
        await().atMost(WAIT).until(agent::isReady);
        TargetServer echo = harness.track(TargetServer.echo());

        try (Socket socket = new Socket()) {
            socket.connect(server.frontendAddress(), (int) WAIT.toMillis());
            socket.setSoTimeout((int) WAIT.toMillis());
            assertThat(connect(socket, echo.hostPort())).startsWith("HTTP/1.1 200");
            byte[] payload = new byte[4 * 1024 * 1024];
            new Random(3).nextBytes(payload);
            OutputStream out = socket.getOutputStream();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    out.write(payload);
                    out.flush();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            InputStream in = socket.getInputStream();
            MessageDigest digest = Payload.newDigest();
            byte[] buffer = new byte[64 * 1024];
            long total = 0;
            while (total < payload.length) {
                int read = in.read(buffer);
                assertThat(read).isPositive();
                digest.update(buffer, 0, read);
                total += read;
            }
            writer.join();
            MessageDigest expected = Payload.newDigest();
            expected.update(payload);
            assertThat(Payload.hex(digest)).isEqualTo(Payload.hex(expected));
        }
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(agent.openTunnels()).isZero();
            assertThat(server.tunnelCount()).isZero();
        });
    }

    @Test
    void mapsDialErrorsToStatusCodes() throws Exception {
        TunnelServer server = server();
        assertThat(connectStatus(server, "127.0.0.1:9")).startsWith("HTTP/1.1 503");

        TunnelClientSet agent = harness.startAgent(TunnelHarness.agentConfig(server)
                .dialTimeout(Duration.ofMillis(300)).build());
        await().atMost(WAIT).until(agent::isReady);
        int closedPort;
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = listener.getLocalPort();
        }
        assertThat(connectStatus(server, "127.0.0.1:" + closedPort)).startsWith("HTTP/1.1 502");
        try (FullListener full = FullListener.open()) {
            assertThat(connectStatus(server, full.address())).startsWith("HTTP/1.1 504");
        }
    }

    private static String connectStatus(TunnelServer server, String address) throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(server.frontendAddress(), (int) WAIT.toMillis());
            socket.setSoTimeout((int) WAIT.toMillis());
            return connect(socket, address);
        }
    }

    /** Sends CONNECT and returns the response head. */
    private static String connect(Socket socket, String address) throws Exception {
        socket.getOutputStream().write(("CONNECT " + address + " HTTP/1.1\r\nHost: " + address + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }
}
