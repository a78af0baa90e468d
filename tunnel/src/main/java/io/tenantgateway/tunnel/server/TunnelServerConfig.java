package io.tenantgateway.tunnel.server;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.common.config.ConfigException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The Java konnectivity-server's settings (upstream flag in brackets).
 *
 * @param serverId returned to agents in {@code serverid} ({@code --server-id})
 * @param serverCount returned in {@code servercount} ({@code --server-count})
 * @param agentAddress agent listener ({@code --agent-port}); port 0 picks a free one
 * @param agentTls serving certificate for agents ({@code --cluster-cert/--cluster-key}) and, with mTLS, the CA
 *     for agent certificates ({@code --cluster-ca-cert})
 * @param agentClientAuth {@code REQUIRE} for mTLS
 * @param agentAuthenticator token authentication, or {@code null}; exclusive with mTLS
 * @param mode frontend protocol ({@code --mode})
 * @param udsPath Unix socket for the frontend ({@code --uds-name}), or {@code null}
 * @param frontendAddress TCP frontend, or {@code null}
 * @param frontendTls TLS for the TCP frontend (clients must present certificates from its CA), or {@code null}
 *     for plain TCP (loopback labs only)
 * @param strategies {@code --proxy-strategies}
 * @param flowControl whether to accept the per-tunnel credit extension from agents that offer it
 * @param flowControlWindow our receive window per tunnel when the extension is on
 * @param plainTunnelLimit without the extension: bytes queued towards one slow client before the agent stream
 *     pauses (the Go server holds far less: a small channel per frontend)
 * @param httpConnectDialTimeout how long an HTTP-CONNECT client waits for the dial (the server is the client
 *     there; gRPC clients keep their own timeout)
 * @param eventLoopThreads Netty threads for all listeners
 */
public record TunnelServerConfig(String serverId, int serverCount, InetSocketAddress agentAddress,
        TlsMaterial agentTls, ClientAuthMode agentClientAuth, AgentAuthenticator agentAuthenticator,
        FrontendMode mode, Path udsPath, InetSocketAddress frontendAddress, TlsMaterial frontendTls,
        List<ProxyStrategy> strategies, boolean flowControl, int flowControlWindow, long plainTunnelLimit,
        Duration httpConnectDialTimeout, int eventLoopThreads) {

    public TunnelServerConfig {
        requireNonNull(serverId, "serverId");
        if (serverId.isBlank()) {
            throw new ConfigException("--server-id", "\"\"", "a non-empty id");
        }
        if (serverCount < 1) {
            throw new ConfigException("--server-count", serverCount, ">= 1");
        }
        requireNonNull(agentAddress, "agentAddress");
        requireNonNull(agentTls, "agentTls");
        requireNonNull(agentClientAuth, "agentClientAuth");
        if (agentAuthenticator != null && agentClientAuth != ClientAuthMode.NONE) {
            throw new IllegalArgumentException("agent authentication: token authentication and --cluster-ca-cert"
                    + " (mTLS) are mutually exclusive (expected: one of them)");
        }
        requireNonNull(mode, "mode");
        strategies = List.copyOf(requireNonNull(strategies, "strategies"));
        if (strategies.isEmpty()) {
            throw new ConfigException("--proxy-strategies", "[]", "at least one strategy");
        }
        if (flowControlWindow < 16 * 1024) {
            throw new IllegalArgumentException("flowControlWindow: " + flowControlWindow + " (expected: >= 16384)");
        }
        if (plainTunnelLimit < 16 * 1024) {
            throw new IllegalArgumentException("plainTunnelLimit: " + plainTunnelLimit + " (expected: >= 16384)");
        }
        requireNonNull(httpConnectDialTimeout, "httpConnectDialTimeout");
        if (eventLoopThreads < 1) {
            throw new IllegalArgumentException("eventLoopThreads: " + eventLoopThreads + " (expected: >= 1)");
        }
    }

    public static Builder builder(TlsMaterial agentTls) {
        return new Builder(agentTls);
    }

    public Builder toBuilder() {
        Builder b = new Builder(agentTls);
        b.serverId = serverId;
        b.serverCount = serverCount;
        b.agentAddress = agentAddress;
        b.agentClientAuth = agentClientAuth;
        b.agentAuthenticator = agentAuthenticator;
        b.mode = mode;
        b.udsPath = udsPath;
        b.frontendAddress = frontendAddress;
        b.frontendTls = frontendTls;
        b.strategies = strategies;
        b.flowControl = flowControl;
        b.flowControlWindow = flowControlWindow;
        b.plainTunnelLimit = plainTunnelLimit;
        b.httpConnectDialTimeout = httpConnectDialTimeout;
        b.eventLoopThreads = eventLoopThreads;
        return b;
    }

    /** Defaults: one server, agents on 127.0.0.1 with a free port, TLS without client certs, gRPC mode. */
    public static final class Builder {
        private final TlsMaterial agentTls;
        private String serverId = "server-1";
        private int serverCount = 1;
        private InetSocketAddress agentAddress = new InetSocketAddress("127.0.0.1", 0);
        private ClientAuthMode agentClientAuth = ClientAuthMode.NONE;
        private AgentAuthenticator agentAuthenticator;
        private FrontendMode mode = FrontendMode.GRPC;
        private Path udsPath;
        private InetSocketAddress frontendAddress;
        private TlsMaterial frontendTls;
        private List<ProxyStrategy> strategies = List.of(ProxyStrategy.DEFAULT);
        private boolean flowControl = true;
        private int flowControlWindow = 2 * 1024 * 1024;
        private long plainTunnelLimit = 8L * 1024 * 1024;
        private Duration httpConnectDialTimeout = Duration.ofSeconds(30);
        private int eventLoopThreads = Math.max(1, Runtime.getRuntime().availableProcessors());

        private Builder(TlsMaterial agentTls) {
            this.agentTls = agentTls;
        }

        public Builder serverId(String value) {
            serverId = value;
            return this;
        }

        public Builder serverCount(int value) {
            serverCount = value;
            return this;
        }

        public Builder agentAddress(InetSocketAddress value) {
            agentAddress = value;
            return this;
        }

        public Builder agentClientAuth(ClientAuthMode value) {
            agentClientAuth = value;
            return this;
        }

        public Builder agentAuthenticator(AgentAuthenticator value) {
            agentAuthenticator = value;
            return this;
        }

        public Builder mode(FrontendMode value) {
            mode = value;
            return this;
        }

        public Builder udsPath(Path value) {
            udsPath = value;
            return this;
        }

        public Builder frontendAddress(InetSocketAddress value) {
            frontendAddress = value;
            return this;
        }

        public Builder frontendTls(TlsMaterial value) {
            frontendTls = value;
            return this;
        }

        public Builder strategies(List<ProxyStrategy> value) {
            strategies = value;
            return this;
        }

        public Builder flowControl(boolean value) {
            flowControl = value;
            return this;
        }

        public Builder flowControlWindow(int value) {
            flowControlWindow = value;
            return this;
        }

        public Builder plainTunnelLimit(long value) {
            plainTunnelLimit = value;
            return this;
        }

        public Builder httpConnectDialTimeout(Duration value) {
            httpConnectDialTimeout = value;
            return this;
        }

        public Builder eventLoopThreads(int value) {
            eventLoopThreads = value;
            return this;
        }

        public TunnelServerConfig build() {
            return new TunnelServerConfig(serverId, serverCount, agentAddress, agentTls, agentClientAuth,
                    agentAuthenticator, mode, udsPath, frontendAddress, frontendTls, strategies, flowControl,
                    flowControlWindow, plainTunnelLimit, httpConnectDialTimeout, eventLoopThreads);
        }
    }
}
