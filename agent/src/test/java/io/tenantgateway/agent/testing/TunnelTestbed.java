package io.tenantgateway.agent.testing;

import static io.tenantgateway.agent.testing.Waits.WAIT;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.AgentAuthenticator;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A konnectivity-server (our Java one, token auth, Unix-socket frontend), a loopback echo target and a
 * ProxyService client: what an agent under test connects to and what a test dials through it.
 */
public final class TunnelTestbed implements AutoCloseable {
    public static final String TOKEN = "agent-token-for-tests";
    /**
     * What a test adds to the agent's flags when its agent must reach this testbed's loopback targets (the echo
     * target, downloads, its own webhook on 127.0.0.1): the agent's default dial policy denies loopback
     * (agent/README.md, "Dial policy"); naming it opens loopback and nothing else (the admin port stays closed).
     */
    public static final String DIAL_LOOPBACK = "--dial-allow=127.0.0.0/8";
    /** Upstream mode: bytes the server queues per client before pausing the agent stream. */
    static final long UPSTREAM_TUNNEL_LIMIT = 256 * 1024;

    public final TestPki pki = TestPki.create("agent-it");
    public final TestPki.Files files;
    public final Path tokenFile;
    public final TunnelServer server;
    public final EchoTarget echo;
    private final int agentPort;
    private final ProxyClient proxy;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    public TunnelTestbed(Path dir) throws IOException {
        this(dir, true);
    }

    /**
     * @param flowControl whether the server accepts the per-tunnel credit extension; {@code false} is "upstream
     *     mode": the agent falls back to the plain protocol, as against the Go konnectivity-server, and the
     *     server queues little per client before it pauses the agent stream (the Go server forwards each DATA
     *     synchronously to its client), so backpressure reaches the agent as it does in production
     */
    public TunnelTestbed(Path dir, boolean flowControl) throws IOException {
        this(dir, 0, true, flowControl);
    }

    /**
     * @param agentPort the server's agent port (0: any free one)
     * @param start whether the server listens now; otherwise {@link #startServer()} starts it later (a server that
     *        "appears" after the agent)
     */
    public TunnelTestbed(Path dir, int agentPort, boolean start) throws IOException {
        this(dir, agentPort, start, true);
    }

    private TunnelTestbed(Path dir, int agentPort, boolean start, boolean flowControl) throws IOException {
        files = pki.writeTo(dir.resolve("pki"));
        tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "\n");
        this.agentPort = agentPort;
        server = new TunnelServer(TunnelServerConfig.builder(pki.serverMaterial()).serverId("kas-0").serverCount(1)
                .agentAddress(new InetSocketAddress("127.0.0.1", agentPort))
                .agentAuthenticator(AgentAuthenticator.staticTokens(Set.of(TOKEN)))
                .udsPath(dir.resolve("konnectivity-server.socket")).flowControl(flowControl)
                .plainTunnelLimit(flowControl ? 8L * 1024 * 1024 : UPSTREAM_TUNNEL_LIMIT).eventLoopThreads(2)
                .build());
        if (start) {
            server.start();
        }
        closeables.add(server);
        echo = new EchoTarget();
        closeables.add(echo);
        proxy = ProxyClient.builder().unixSocket(server.udsPath()).build();
        closeables.add(0, proxy);
    }

    /**
     * Runs {@code tenant-gateway probe --webhook} against the webhook at {@code 127.0.0.1:webhookPort} through this
     * server's tunnel, as an operator would from the control plane, and asserts it passes.
     */
    public void probeWebhook(int webhookPort) {
        java.io.StringWriter out = new java.io.StringWriter();
        int probe = io.tenantgateway.agent.main.Main.run(new java.io.PrintWriter(out, true),
                new java.io.PrintWriter(out, true), "probe", "--uds", server.udsPath().toString(), "--target",
                "127.0.0.1:" + webhookPort, "--tls-server-name", "hami-scheduler.kube-system.svc", "--webhook");
        org.assertj.core.api.Assertions.assertThat(probe).as(out.toString()).isZero();
    }

    /** Starts a server built with {@code start = false}. */
    public void startServer() {
        server.start();
    }

    /**
     * A port that was free a moment ago on 127.0.0.1 (bound, then released): for a listener that must be known
     * before it exists, or a port nobody listens on.
     */
    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Kamaji's agent argument list (shared/spec/kamaji.md) aimed at this server, health/admin on port 0. */
    public List<String> kamajiArgs() {
        return List.of("-v=8", "--logtostderr=true", "--ca-cert=" + files.caCert(), "--proxy-server-host=127.0.0.1",
                "--proxy-server-port=" + (server.agentAddress() != null
                        ? server.agentAddress().getPort() : agentPort), "--admin-server-port=0",
                "--health-server-port=0", "--service-account-token-path=" + tokenFile);
    }

    /** {@link #kamajiArgs()} with the health server on 127.0.0.1 (port 0) and the API of {@code kubeconfig}. */
    public List<String> kamajiArgs(java.nio.file.Path kubeconfig) {
        List<String> args = new java.util.ArrayList<>(kamajiArgs());
        args.removeIf(arg -> arg.startsWith("--health-server-port="));
        args.addAll(List.of("--health-server-host=127.0.0.1", "--health-server-port=0", "--kubeconfig=" + kubeconfig));
        return args;
    }

    /** {@link #kamajiArgs()} with the HAMi webhook on this testbed's files TLS at {@code 127.0.0.1:webhookPort}. */
    public List<String> webhookArgs(int webhookPort) {
        List<String> args = new ArrayList<>(kamajiArgs());
        args.addAll(List.of("--webhook-tls-cert=" + files.serverCert(), "--webhook-tls-key=" + files.serverKey(),
                "--webhook-listen=127.0.0.1:" + webhookPort));
        return args;
    }

    /** {@link #webhookArgs(int)} with the health port at {@code 127.0.0.1:healthPort} instead of port 0. */
    public List<String> webhookArgs(int webhookPort, int healthPort) {
        List<String> args = webhookArgs(webhookPort);
        args.removeIf(arg -> arg.startsWith("--health-server-port="));
        args.addAll(List.of("--health-server-host=127.0.0.1", "--health-server-port=" + healthPort));
        return args;
    }

    /** Dials {@code address} through the server; {@code handler} is added before the channel turns active. */
    public CompletableFuture<Channel> dial(String address, ChannelHandler handler) {
        return proxy.dial(address, handler);
    }

    /** Dials the echo target through the tunnel. */
    public Tunnel dialEcho() throws Exception {
        Tunnel tunnel = new Tunnel();
        tunnel.channel = proxy.dial(echo.hostPort(), tunnel.handler).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return tunnel;
    }

    /** One tunnelled connection; {@link #echo} sends text and returns what came back. */
    public static final class Tunnel implements AutoCloseable {
        private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
        Channel channel;
        final SimpleChannelInboundHandler<ByteBuf> handler = new SimpleChannelInboundHandler<>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                received.add(msg.toString(StandardCharsets.UTF_8));
            }
        };

        public String echo(String text) throws InterruptedException {
            channel.writeAndFlush(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
            StringBuilder answer = new StringBuilder();
            while (answer.length() < text.length()) {
                String part = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                if (part == null) {
                    return answer.toString();
                }
                answer.append(part);
            }
            return answer.toString();
        }

        public boolean isOpen() {
            return channel.isActive();
        }

        @Override
        public void close() {
            channel.close().syncUninterruptibly();
        }
    }

    /** A stand-alone echo target (tests that bring their own server). */
    public static EchoTarget newEchoTarget() throws IOException {
        return new EchoTarget();
    }

    /** A blocking echo server on 127.0.0.1:0, one thread per connection (tests open few). */
    public static final class EchoTarget implements AutoCloseable {
        private final ServerSocket socket;
        private final List<Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();

        EchoTarget() throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor = new Thread(this::acceptLoop, "echo-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        public String hostPort() {
            return "127.0.0.1:" + socket.getLocalPort();
        }

        private void acceptLoop() {
            while (!socket.isClosed()) {
                try {
                    Socket connection = socket.accept();
                    accepted.add(connection);
                    Thread worker = new Thread(() -> echo(connection), "echo-" + connection.getPort());
                    worker.setDaemon(true);
                    worker.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private static void echo(Socket connection) {
            try (connection; InputStream in = connection.getInputStream(); OutputStream out = connection.getOutputStream()) {
                byte[] buffer = new byte[8192];
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException e) {
                // peer closed
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket connection : accepted) {
                connection.close();
            }
        }
    }

    @Override
    public void close() {
        for (AutoCloseable closeable : closeables) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("close failed: " + closeable, e);
            }
        }
    }
}
