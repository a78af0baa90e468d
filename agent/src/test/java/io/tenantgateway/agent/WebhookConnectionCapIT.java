package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.certs.vertx.VertxTls;
import io.tenantgateway.certs.testing.TestPki;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standalone webhook, started from the built jar as an operator would, under 5,000 idle TLS connections: it
 * serves at most {@code --max-connections} (1,024 by default), closes the rest as they arrive, and its resident
 * memory stays bounded.
 */
@Timeout(180)
class WebhookConnectionCapIT {
    @TempDir
    Path dir;

    private Process webhook;
    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void stop() throws Exception {
        if (webhook != null) {
            webhook.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void fiveThousandIdleConnectionsHitTheCapAndMemoryStaysBounded() throws Exception {
        TestPki pki = TestPki.create("cap");
        TestPki.Files files = pki.writeTo(dir.resolve("pki"));
        int port = TunnelTestbed.freePort();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xmx128m", "-jar",
                JarProcess.jar().toAbsolutePath().toString(), "webhook", "--listen=127.0.0.1:" + port,
                "--tls-cert=" + files.serverCert(), "--tls-key=" + files.serverKey()));
        webhook = new ProcessBuilder(command).redirectErrorStream(true).start();
        List<String> log = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(webhook.getInputStream(),
                    StandardCharsets.UTF_8))) {
                in.lines().forEach(log::add);
            } catch (java.io.IOException ignored) {
                // the process ended
            }
        }, "webhook-log");
        reader.setDaemon(true);
        reader.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> log.stream().anyMatch(l -> l.contains("webhook listening")));
        assertThat(log.stream().filter(l -> l.contains("webhook listening")).findFirst().orElseThrow())
                .contains("maxConnections=1024");
        long rssBefore = rssKiB(webhook.pid());

        NetClient net = vertx.createNetClient(VertxTls.configureClient(new NetClientOptions().setConnectTimeout(20_000),
                pki.trustOnlyMaterial(), Clock.systemUTC()).setHostnameVerificationAlgorithm(""));
        int attempts = 5000;
        AtomicInteger closedByServer = new AtomicInteger();
        // How long after its handshake each connection was closed (printed: load-dependent, see below).
        Queue<Long> closeMillis = new ConcurrentLinkedQueue<>();
        List<NetSocket> sockets = new CopyOnWriteArrayList<>();
        long rssAtCap = 0;
        for (int batch = 0; batch < attempts / 250; batch++) {
            List<Future<NetSocket>> connects = new ArrayList<>();
            for (int i = 0; i < 250; i++) {
                connects.add(net.connect(port, "127.0.0.1").onSuccess(socket -> {
                    long connected = System.nanoTime();
                    sockets.add(socket);
                    socket.closeHandler(ignored -> {
                        closedByServer.incrementAndGet();
                        closeMillis.add((System.nanoTime() - connected) / 1_000_000);
                    });
                }));
            }
            Future.join(connects).toCompletionStage().toCompletableFuture().handle((ok, failure) -> null)
                    .get(60, TimeUnit.SECONDS);
            if (batch == 7) {
                rssAtCap = rssKiB(webhook.pid()); // 2,000 attempts: the cap is full
            }
        }
        // Connections over the cap are closed as the server gets to them (on a quiet machine right after their
        // handshake; a loaded one was seen to take 12 s for half of them, so only the ceiling bounds it); the rest
        // stay until their deadline. That the cap did the closing shows in the server's log line below.
        await().atMost(WAIT).until(() -> sockets.size() - closedByServer.get() <= 1024);
        int heldOpen = sockets.size() - closedByServer.get();
        long rssAfter = rssKiB(webhook.pid());
        System.out.printf("webhook under %d connection attempts: %d handshakes completed, %d held open (cap 1024),"
                        + " %d closed by the server; RSS %d MiB before, %d MiB after 2,000 attempts (cap full),"
                        + " %d MiB after 5,000%n", attempts, sockets.size(), heldOpen, closedByServer.get(),
                rssBefore / 1024, rssAtCap / 1024, rssAfter / 1024);
        List<Long> sorted = new ArrayList<>(closeMillis);
        Collections.sort(sorted);
        if (!sorted.isEmpty()) {
            System.out.printf("closed by the server after their handshake: p10 %d ms, p50 %d ms, max %d ms%n",
                    sorted.get(sorted.size() / 10), sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
        }
        assertThat(heldOpen).isLessThanOrEqualTo(1024);
        assertThat(closedByServer.get()).isGreaterThanOrEqualTo(sockets.size() - 1024);
        // Bounded: once the cap is full, 3,000 more connections cost (almost) nothing.
        assertThat(rssAfter - rssAtCap).as("RSS growth in KiB from 2,000 to 5,000 attempts").isLessThan(48 * 1024);
        assertThat(log).anyMatch(l -> l.contains("connections open, the cap (max connections 1024)"));
        // The idle ones are cut at the request deadline: the webhook is free again.
        await().atMost(WAIT).until(() -> closedByServer.get() == sockets.size());
        assertThat(webhook.isAlive()).isTrue();
        net.close();
    }

    private static long rssKiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no VmRSS for " + pid);
    }
}
