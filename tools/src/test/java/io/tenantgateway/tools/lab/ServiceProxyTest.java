package io.tenantgateway.tools.lab;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.EventLoopGroup;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The kube-proxy stand-in with real loopback sockets: relays to the endpoint, resets without one. */
@Timeout(60)
class ServiceProxyTest {
    private final EventLoopGroup group = Transports.newGroup(1, "service-proxy-test");
    private final ServiceProxy proxy = new ServiceProxy("webhook.test.svc", group);

    @AfterEach
    void stop() {
        proxy.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void relaysBothWaysToTheEndpoint() throws Exception {
        try (ServerSocket endpoint = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try (Socket accepted = endpoint.accept(); InputStream in = accepted.getInputStream();
                        OutputStream out = accepted.getOutputStream()) {
                    byte[] request = in.readNBytes(5);
                    out.write(("echo:" + new String(request, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            proxy.start();
            proxy.endpoint(new InetSocketAddress("127.0.0.1", endpoint.getLocalPort()));

            try (Socket client = new Socket(proxy.address().getAddress(), proxy.address().getPort())) {
                client.setSoTimeout((int) WAIT.toMillis());
                client.getOutputStream().write("hello".getBytes(StandardCharsets.UTF_8));
                assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                        .isEqualTo("echo:hello");
            }
            served.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(proxy.relayed()).isEqualTo(1);
            assertThat(proxy.address().getAddress().isLoopbackAddress()).isTrue();
        }
    }

    @Test
    void resetsConnectionsWhileTheServiceHasNoEndpoint() throws Exception {
        proxy.start();
        assertThat(proxy.endpoint()).isNull();

        try (Socket client = new Socket(proxy.address().getAddress(), proxy.address().getPort())) {
            client.setSoTimeout((int) WAIT.toMillis());
            int read;
            try {
                read = client.getInputStream().read();
            } catch (java.net.SocketException reset) {
                read = -1;
            }
            assertThat(read).as("nothing but a reset or end of stream").isEqualTo(-1);
        }
        await().atMost(WAIT).untilAsserted(() -> assertThat(proxy.rejected()).isEqualTo(1));
        assertThat(proxy.relayed()).isZero();
    }
}
