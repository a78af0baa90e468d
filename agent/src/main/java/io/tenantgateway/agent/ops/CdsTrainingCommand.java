package io.tenantgateway.agent.ops;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.util.ReferenceCountUtil;
import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tenant-gateway cds-training} (hidden): one short, real {@code run} of the pure-tunnel agent on loopback, so
 * that a class-data archive can be made of exactly the classes {@code run} loads to connect, carry a tunnel and answer
 * its health and admin ports (issue 35). {@code bin/tenant-gateway cds-archive} runs it and then dumps the static
 * archive next to the jar ({@code tenant-gateway.jsa}) from the class list it wrote; the build and the image both do
 * that, and {@code bin/tenant-gateway run} uses the archive. Measured in {@code bench --scenario footprint}
 * (BENCHMARKS.md).
 *
 * <p>It starts a Java konnectivity-server with a throw-away PKI and an echo target in this JVM, then the agent as its
 * own process through {@code --launcher} ({@code LAUNCHER run ...}, the launcher's own JVM options plus
 * {@code JAVA_OPTS=-XX:DumpLoadedClassList=FILE}), waits until the agent is connected, sends bytes through one tunnel
 * to the echo target and back, reads {@code /readyz}, {@code /healthz} and {@code /livez} and the admin port's
 * {@code /ui}, and stops the agent with SIGTERM (it drains and exits 0, which writes the list). Not {@code /metrics}:
 * an agent nobody scrapes never loads the management beans, and the archive is touched whole at every start. Only
 * the run's classes: the JDK's default class list ({@code lib/classlist}, the base archive's) has about 80 more that
 * the run does not load, and every page of the archive is resident (the JVM relocates it at start), so they cost a
 * pure tunnel 0.6 MiB; with the parts on they were worth nothing measurable (BENCHMARKS.md, issue 35). Nothing leaves
 * 127.0.0.1. Exit 0 when all of that worked, 1 otherwise.
 *
 * <p>Threading: runs on the caller's thread; the server and the agent's output reader run on their own.
 */
@Command(name = "cds-training", hidden = true, mixinStandardHelpOptions = true,
        description = "Run the pure-tunnel agent once on loopback through the launcher and write the classes it "
                + "loaded (for -Xshare:dump at build time).")
public final class CdsTrainingCommand implements Callable<Integer> {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    @Option(names = "--launcher", required = true, paramLabel = "FILE",
            description = "The launcher that starts `run` as the image does (bin/tenant-gateway).")
    Path launcher;

    @Option(names = "--class-list", required = true, paramLabel = "FILE",
            description = "Where to write the class list (-XX:SharedClassListFile of the archive dump).")
    Path classList;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        Path dir = Files.createTempDirectory("tenant-gateway-cds-");
        Clock clock = Clock.systemUTC();
        EventLoopGroup group = Transports.newGroup(1, "cds-training");
        Process agentProcess = null;
        try {
            CertificateAuthority ca = CertificateAuthority.create("cds-training-ca", KeyAlgorithm.EC_P256,
                    Duration.ofHours(1), clock);
            CertBundle server = ca.issue(CertificateRequest.server("konnectivity-server").ipAddresses("127.0.0.1")
                    .validity(Duration.ofHours(1)).build());
            CertBundle agent = ca.issue(CertificateRequest.client("system:konnectivity-agent")
                    .validity(Duration.ofHours(1)).build());
            Pem.writeCertificates(ca.trustBundle().certificates(), dir.resolve("ca.crt"));
            Pem.writeBundle(agent, dir.resolve("agent.crt"), dir.resolve("agent.key"));
            Channel echo = new ServerBootstrap().group(group).channel(Transports.serverSocketChannel(group))
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.writeAndFlush(msg);
                                }
                            });
                        }
                    }).bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
            Path runList = dir.resolve("run.classlist");
            try (TunnelServer tunnelServer = new TunnelServer(TunnelServerConfig.builder(TlsMaterial.of(server,
                    ca.trustBundle())).serverId("cds-training").serverCount(1)
                    .agentAddress(new InetSocketAddress("127.0.0.1", 0)).agentClientAuth(ClientAuthMode.REQUIRE)
                    .udsPath(dir.resolve("server.sock")).build(), clock);
                    ProxyClient proxy = ProxyClient.builder().eventLoopGroup(group)
                            .unixSocket(dir.resolve("server.sock")).build()) {
                tunnelServer.start();
                ProcessBuilder builder = new ProcessBuilder(launcher.toString(), "run", "--proxy-server-host=127.0.0.1",
                        "--proxy-server-port=" + tunnelServer.agentAddress().getPort(),
                        "--ca-cert=" + dir.resolve("ca.crt"), "--agent-cert=" + dir.resolve("agent.crt"),
                        "--agent-key=" + dir.resolve("agent.key"), "--agent-id=cds-training",
                        "--health-server-host=127.0.0.1", "--health-server-port=0",
                        "--admin-bind-address=127.0.0.1", "--admin-server-port=0", "--dial-allow=127.0.0.1",
                        "--shutdown-grace=1s").redirectErrorStream(true);
                builder.environment().put("JAVA_OPTS", "-XX:DumpLoadedClassList=" + runList);
                builder.environment().remove("TENANT_GATEWAY_JVM_OPTS");
                agentProcess = builder.start();
                CompletableFuture<Integer> healthPort = new CompletableFuture<>();
                CompletableFuture<Integer> adminPort = new CompletableFuture<>();
                Thread reader = readOutput(agentProcess, err, healthPort, adminPort);
                await("the agent connects", () -> tunnelServer.agentCount() == 1);
                roundTrip(proxy, (InetSocketAddress) echo.localAddress());
                int health = healthPort.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                for (String path : List.of("/readyz", "/healthz", "/livez")) {
                    get(health, path);
                }
                get(adminPort.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "/ui");
                agentProcess.destroy(); // SIGTERM: the agent drains and exits
                if (!agentProcess.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the agent did not exit within " + TIMEOUT.toSeconds()
                            + "s of SIGTERM");
                }
                reader.join(TIMEOUT.toMillis());
                if (agentProcess.exitValue() != 0) {
                    throw new IllegalStateException("the agent exited " + agentProcess.exitValue()
                            + " after SIGTERM (expected: 0)");
                }
            } finally {
                echo.close().syncUninterruptibly();
            }
            int classes = writeClassList(runList, classList);
            err.println("cds-training: connected, one tunnel round trip, health and admin ports answered; "
                    + classList + " lists the " + classes + " classes the run loaded");
            return ExitCodes.OK;
        } catch (RuntimeException | IOException | ExecutionException | TimeoutException e) {
            err.println("cds-training: " + e);
            return ExitCodes.FAILED;
        } finally {
            if (agentProcess != null && agentProcess.isAlive()) {
                agentProcess.destroyForcibly();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    /** Copies the agent's output to {@code err} and completes the ports when their lines appear. */
    private static Thread readOutput(Process process, PrintWriter err, CompletableFuture<Integer> healthPort,
            CompletableFuture<Integer> adminPort) {
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    err.println("agent: " + line);
                    err.flush();
                    ListeningLog.healthPort(line).ifPresent(healthPort::complete);
                    ListeningLog.adminPort(line).ifPresent(adminPort::complete);
                }
            } catch (IOException e) {
                healthPort.completeExceptionally(e);
                adminPort.completeExceptionally(e);
            }
        }, "cds-training-agent-output");
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    /**
     * Writes the run's class list to {@code target} (its class lines, and its {@code @} lines: lambda forms and
     * proxies); returns how many classes it names.
     */
    static int writeClassList(Path runList, Path target) throws IOException {
        List<String> lines = Files.readAllLines(runList, StandardCharsets.UTF_8);
        if (lines.stream().noneMatch(line -> line.startsWith("io/tenantgateway/"))) {
            throw new IllegalStateException(runList + " names no class of the agent: was the list written?");
        }
        Path parent = target.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.write(target, lines, StandardCharsets.UTF_8);
        return (int) lines.stream().filter(line -> !line.isBlank() && !line.startsWith("#") && !line.startsWith("@"))
                .count();
    }

    private static void roundTrip(ProxyClient proxy, InetSocketAddress target) throws Exception {
        byte[] payload = "tenant-gateway cds training".getBytes(StandardCharsets.US_ASCII);
        CompletableFuture<Void> echoed = new CompletableFuture<>();
        Channel tunnel = proxy.dial(target.getHostString(), target.getPort(), new ChannelInboundHandlerAdapter() {
            private int received;

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                received += ((ByteBuf) msg).readableBytes();
                ReferenceCountUtil.release(msg);
                if (received >= payload.length) {
                    echoed.complete(null);
                }
            }
        }).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        try {
            tunnel.writeAndFlush(Unpooled.wrappedBuffer(payload));
            echoed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            tunnel.close().syncUninterruptibly();
        }
    }

    /** A plain HTTP/1.1 GET on a socket (no HTTP client library: only the agent's own classes get archived). */
    private static void get(int port, String path) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] head = in.readNBytes(12);
            String status = new String(head, StandardCharsets.US_ASCII);
            if (!status.startsWith("HTTP/1.1 ")) {
                throw new IOException("GET " + path + ": not an HTTP answer: " + status);
            }
            in.transferTo(OutputStream.nullOutputStream());
        }
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + TIMEOUT.toSeconds() + "s waiting until " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
