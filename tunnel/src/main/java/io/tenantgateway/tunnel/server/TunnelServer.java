package io.tenantgateway.tunnel.server;

import static java.util.Objects.requireNonNull;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.common.lifecycle.Lifecycle;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.protocol.FlowControlOffer;
import io.tenantgateway.tunnel.protocol.Headers;
import io.tenantgateway.tunnel.transport.GrpcHeaders;
import io.tenantgateway.tunnel.transport.TlsProviders;
import io.tenantgateway.tunnel.transport.Transports;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java konnectivity-server, good enough to be the reference peer for the agent in tests, the lab and the
 * probe tool: the agent listener ({@code /AgentService/Connect}, TLS, mTLS or bearer tokens), {@code serverid} and
 * {@code servercount} response headers, proxy strategies, DRAIN, pending-dial and tunnel bookkeeping, and a
 * frontend ({@code /ProxyService/Proxy} or HTTP CONNECT) over a Unix socket and/or TCP.
 *
 * <p>Threading: all listeners share one event loop group; gRPC callbacks run directly on the transport's loop,
 * which owns that stream. Frontend and agent streams hand each other commands (see {@link ServerTunnel}).
 */
public final class TunnelServer extends Lifecycle {
    private static final Logger log = LoggerFactory.getLogger(TunnelServer.class);
    /** HTTP/2 window of agent connections: shared by all tunnels of an agent, so large for throughput. */
    private static final int AGENT_HTTP2_WINDOW = 8 * 1024 * 1024;
    /**
     * HTTP/2 window of frontend streams (one per tunnel): what a client may have in flight before the server
     * requests its messages, so it bounds the server's memory per stalled tunnel together with the credit.
     */
    private static final int FRONTEND_HTTP2_WINDOW = 1024 * 1024;

    private final TunnelServerConfig config;
    private final Clock clock;
    private final AgentRegistry registry;
    private EventLoopGroup group;
    private Server agentServer;
    private final List<Server> grpcFrontends = new ArrayList<>();
    private final List<Channel> httpFrontends = new ArrayList<>();
    private InetSocketAddress boundAgentAddress;
    private InetSocketAddress boundFrontendAddress;

    public TunnelServer(TunnelServerConfig config) {
        this(config, Clock.systemUTC());
    }

    public TunnelServer(TunnelServerConfig config, Clock clock) {
        super("konnectivity server " + requireNonNull(config, "config").serverId());
        this.config = config;
        this.clock = requireNonNull(clock, "clock");
        this.registry = new AgentRegistry(config.strategies());
    }

    /**
     * Binds every listener. Idempotent ({@link Lifecycle#start()}): on failure closes what was started, stays closed
     * and rethrows.
     */
    @Override
    protected void doStart() {
        try {
            group = Transports.newGroup(config.eventLoopThreads(), "tunnel-server-" + config.serverId());
            startAgentListener();
            if (config.udsPath() != null) {
                startFrontend(new DomainSocketAddress(prepareSocketPath(config.udsPath()).toString()), null);
            }
            if (config.frontendAddress() != null) {
                SslContext tls = null;
                if (config.frontendTls() != null) {
                    tls = config.mode() == FrontendMode.GRPC
                            ? TlsContexts.build(GrpcSslContexts.configure(TlsContexts.serverBuilder(
                                    config.frontendTls(), ClientAuthMode.REQUIRE, clock), TlsProviders.preferred()))
                            : TlsContexts.server(config.frontendTls(), ClientAuthMode.REQUIRE, clock);
                } else {
                    log.warn("frontend on {} without TLS: anyone who can reach it can dial through the agents",
                            config.frontendAddress());
                }
                boundFrontendAddress = (InetSocketAddress) startFrontend(config.frontendAddress(), tls);
            }
            log.info("konnectivity server started serverID={} serverCount={} agentAddress={} mode={} uds={}"
                    + " frontend={} strategies={}", config.serverId(), config.serverCount(), boundAgentAddress,
                    config.mode(), config.udsPath(), boundFrontendAddress, config.strategies());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start konnectivity server " + config.serverId() + ": "
                    + e.getMessage(), e);
        }
    }

    private void startAgentListener() throws IOException {
        SslContext tls = TlsContexts.build(GrpcSslContexts.configure(
                TlsContexts.serverBuilder(config.agentTls(), config.agentClientAuth(), clock), TlsProviders.preferred()));
        ServerServiceDefinition service = ServerServiceDefinition.builder(TunnelMethods.AGENT_SERVICE)
                .addMethod(TunnelMethods.CONNECT, new AgentHandler()).build();
        agentServer = NettyServerBuilder.forAddress(config.agentAddress())
                .channelType(Transports.serverSocketChannel(group))
                .withOption(ChannelOption.SO_REUSEADDR, true)
                .bossEventLoopGroup(group)
                .workerEventLoopGroup(group)
                .sslContext(tls)
                .directExecutor()
                .flowControlWindow(AGENT_HTTP2_WINDOW)
                .maxInboundMessageSize(AgentConnection.MAX_INBOUND_MESSAGE)
                .permitKeepAliveTime(30, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .addService(service)
                .build()
                .start();
        boundAgentAddress = (InetSocketAddress) agentServer.getListenSockets().get(0);
    }

    private SocketAddress startFrontend(SocketAddress address, SslContext tls) throws IOException {
        boolean domain = address instanceof DomainSocketAddress;
        if (config.mode() == FrontendMode.GRPC) {
            ServerServiceDefinition service = ServerServiceDefinition.builder(TunnelMethods.PROXY_SERVICE)
                    .addMethod(TunnelMethods.PROXY, new GrpcFrontend(registry, group)).build();
            NettyServerBuilder builder = NettyServerBuilder.forAddress(address)
                    .channelType(domain ? Transports.serverDomainSocketChannel(group)
                            : Transports.serverSocketChannel(group))
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .directExecutor()
                    .flowControlWindow(FRONTEND_HTTP2_WINDOW)
                    .maxInboundMessageSize(AgentConnection.MAX_INBOUND_MESSAGE)
                    .addService(service);
            if (tls != null) {
                builder.sslContext(tls);
            }
            Server server = builder.build().start();
            grpcFrontends.add(server);
            return server.getListenSockets().get(0);
        }
        Channel channel = new ServerBootstrap().group(group)
                .channel(domain ? Transports.serverDomainSocketChannel(group) : Transports.serverSocketChannel(group))
                .childHandler(new HttpConnectFrontend(registry, tls, config.httpConnectDialTimeout()))
                .childOption(ChannelOption.TCP_NODELAY, !domain ? Boolean.TRUE : null)
                .bind(address).syncUninterruptibly().channel();
        httpFrontends.add(channel);
        return channel.localAddress();
    }

    private static Path prepareSocketPath(Path path) throws IOException {
        Files.createDirectories(path.toAbsolutePath().getParent());
        Files.deleteIfExists(path); // a stale socket from a previous run
        return path;
    }

    /** The bound agent listener address (the real port when configured with 0). */
    public InetSocketAddress agentAddress() {
        return boundAgentAddress;
    }

    /** The bound TCP frontend address, or {@code null}. */
    public InetSocketAddress frontendAddress() {
        return boundFrontendAddress;
    }

    public Path udsPath() {
        return config.udsPath();
    }

    public TunnelServerConfig config() {
        return config;
    }

    public int agentCount() {
        return registry.agents().size();
    }

    public int tunnelCount() {
        return registry.agents().stream().mapToInt(a -> a.tunnels().size()).sum();
    }

    public int pendingDialCount() {
        return registry.pendingCount();
    }

    public ServerSnapshot snapshot() {
        Instant now = clock.instant();
        List<ServerSnapshot.Agent> agents = new ArrayList<>();
        List<ServerSnapshot.Tunnel> tunnels = new ArrayList<>();
        for (AgentConnection agent : registry.agents()) {
            agents.add(new ServerSnapshot.Agent(agent.agentId, agent.identifiers.encode(), agent.draining(),
                    agent.creditMode(), agent.since, agent.tunnels().size()));
            for (ServerTunnel tunnel : agent.tunnels().values()) {
                tunnels.add(new ServerSnapshot.Tunnel(tunnel.connectId, agent.agentId, tunnel.address,
                        tunnel.bytesFromClient, tunnel.bytesToClient, tunnel.bufferedForClient(),
                        Duration.between(tunnel.openedAt, now)));
            }
        }
        return new ServerSnapshot(now, config.serverId(), agents, tunnels, registry.pendingCount());
    }

    /** Stops every listener and drops all streams (agents see the connection end, as when a server dies). */
    @Override
    protected void doClose() {
        closeAll();
        log.info("konnectivity server closed serverID={}", config.serverId());
    }

    private void closeAll() {
        if (agentServer != null) {
            agentServer.shutdownNow();
        }
        grpcFrontends.forEach(Server::shutdownNow);
        httpFrontends.forEach(Channel::close);
        try {
            if (agentServer != null) {
                agentServer.awaitTermination(5, TimeUnit.SECONDS);
            }
            for (Server server : grpcFrontends) {
                server.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (config.udsPath() != null) {
            try {
                Files.deleteIfExists(config.udsPath());
            } catch (IOException e) {
                log.warn("cannot remove Unix socket {}: {}", config.udsPath(), e.toString());
            }
        }
    }

    /** Authenticates agent streams and turns them into {@link AgentConnection}s. */
    private final class AgentHandler implements ServerCallHandler<Packet, Packet> {
        @Override
        public ServerCall.Listener<Packet> startCall(ServerCall<Packet, Packet> call, Metadata headers) {
            EventLoop loop = Transports.currentLoop(group);
            if (loop == null) {
                throw new IllegalStateException("agent call started outside the server's event loops");
            }
            String agentId;
            AgentIdentifiers identifiers;
            try {
                agentId = Headers.single(Headers.AGENT_ID, GrpcHeaders.values(headers, Headers.AGENT_ID));
                String query = headers.get(GrpcHeaders.key(Headers.AGENT_IDENTIFIERS));
                identifiers = query == null ? AgentIdentifiers.NONE : AgentIdentifiers.parse(query);
            } catch (IllegalArgumentException e) {
                call.close(Status.INVALID_ARGUMENT.withDescription(e.getMessage()), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
            FlowControlOffer offer = config.flowControl()
                    ? FlowControlOffer.parse(headers.get(GrpcHeaders.key(Headers.FLOW_CONTROL))).orElse(null)
                    : null;
            AgentConnection connection = new AgentConnection(call, loop, agentId, identifiers, registry, clock,
                    offer, config.flowControlWindow(), config.plainTunnelLimit());
            AgentAuthenticator authenticator = config.agentAuthenticator();
            if (authenticator == null) {
                connection.accept(config.serverId(), config.serverCount());
                return connection;
            }
            String token = Headers.bearerToken(headers.get(GrpcHeaders.key(Headers.AUTHORIZATION))).orElse(null);
            if (token == null) {
                connection.reject(Status.UNAUTHENTICATED.withDescription("missing bearer token in the"
                        + " authorization header (expected: the agent's service account token)"));
                return connection;
            }
            authenticator.authenticate(agentId, token).whenComplete((ok, failure) -> loop.execute(() -> {
                if (failure == null) {
                    connection.accept(config.serverId(), config.serverCount());
                } else {
                    Throwable cause = failure.getCause() != null && failure instanceof CompletionException
                            ? failure.getCause() : failure;
                    connection.reject(Status.UNAUTHENTICATED.withDescription("authentication failed: "
                            + cause.getMessage()));
                }
            }));
            return connection;
        }
    }
}
