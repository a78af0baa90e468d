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
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.AgentCommand;
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
import java.io.IOException;
import java.io.InputStream;
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
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code tenant-gateway cds-training} (hidden): one short, real run of the pure-tunnel agent on loopback, so that the
 * JVM started with {@code -XX:ArchiveClassesAtExit=FILE} writes a class-data archive of exactly the classes
 * {@code run} loads to connect, serve a tunnel and answer its health port. The build and the image make the archive
 * next to the jar ({@code tenant-gateway.jsa}); {@code bin/tenant-gateway run} uses it. Measured in
 * {@code bench --scenario footprint} (BENCHMARKS.md): exec → connected about 45 % shorter.
 *
 * <p>It starts a Java konnectivity-server with a throw-away PKI, {@code run}'s agent through the same configuration
 * mapping ({@link AgentCommand#toConfig()}), waits until the agent is connected, sends bytes through one tunnel to an
 * echo target and back, reads {@code /readyz} and {@code /metrics}, and closes everything. Nothing leaves 127.0.0.1.
 * Exit 0 when all of that worked, 1 otherwise.
 *
 * <p>Threading: runs on the caller's thread; the parts run on their own.
 */
@Command(name = "cds-training", hidden = true, mixinStandardHelpOptions = true,
        description = "Run the pure-tunnel agent once on loopback (for -XX:ArchiveClassesAtExit at build time).")
public final class CdsTrainingCommand implements Callable<Integer> {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        Path dir = Files.createTempDirectory("tenant-gateway-cds-");
        Clock clock = Clock.systemUTC();
        EventLoopGroup group = Transports.newGroup(1, "cds-training");
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
            int healthPort;
            try (TunnelServer tunnelServer = new TunnelServer(TunnelServerConfig.builder(TlsMaterial.of(server,
                    ca.trustBundle())).serverId("cds-training").serverCount(1)
                    .agentAddress(new InetSocketAddress("127.0.0.1", 0)).agentClientAuth(ClientAuthMode.REQUIRE)
                    .udsPath(dir.resolve("server.sock")).build(), clock)) {
                tunnelServer.start();
                AgentCommand command = new AgentCommand();
                new CommandLine(command).parseArgs("--proxy-server-host=127.0.0.1",
                        "--proxy-server-port=" + tunnelServer.agentAddress().getPort(),
                        "--ca-cert=" + dir.resolve("ca.crt"), "--agent-cert=" + dir.resolve("agent.crt"),
                        "--agent-key=" + dir.resolve("agent.key"), "--agent-id=cds-training",
                        "--health-server-host=127.0.0.1", "--health-server-port=0",
                        "--admin-bind-address=127.0.0.1", "--admin-server-port=0", "--dial-allow=127.0.0.1",
                        "--shutdown-grace=1s");
                try (Agent running = new Agent(command.toConfig(), clock);
                        ProxyClient proxy = ProxyClient.builder().eventLoopGroup(group)
                                .unixSocket(tunnelServer.udsPath()).build()) {
                    running.start();
                    await("the agent connects", () -> tunnelServer.agentCount() == 1);
                    roundTrip(proxy, (InetSocketAddress) echo.localAddress());
                    healthPort = running.health().orElseThrow().boundPort();
                    get(healthPort, "/readyz");
                    get(healthPort, "/metrics");
                }
            } finally {
                echo.close().syncUninterruptibly();
            }
            err.println("cds-training: connected, one tunnel round trip, health port " + healthPort + " answered");
            return ExitCodes.OK;
        } catch (RuntimeException | IOException e) {
            err.println("cds-training: " + e);
            return ExitCodes.FAILED;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
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
