package io.tenantgateway.tunnel.testing;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Server + agent + proxy client on loopback with one test PKI. Register it with {@code @RegisterExtension} (it
 * closes everything it started after each test, in reverse order) or close it yourself.
 */
public final class TunnelHarness implements AutoCloseable, AfterEachCallback {
    public static final TestPki PKI = TestPki.create("tunnel-test");
    /**
     * How long the tunnel tests wait for what should happen (a dial answered, an agent ready, bytes through): one
     * generous ceiling, because a busy two-core CI machine is many times slower than a laptop. A test that proves a
     * timeout sets a short one and gives it a peer that never answers (a {@link FullListener}).
     */
    public static final Duration WAIT = Duration.ofSeconds(30);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<TunnelServer> servers = new ArrayList<>();
    private final List<TunnelClientSet> agents = new ArrayList<>();

    public static TunnelServerConfig.Builder serverConfig(String serverId) {
        return TunnelServerConfig.builder(PKI.serverMaterial()).serverId(serverId).eventLoopThreads(2);
    }

    /** Agent defaults for tests: fast sync/probe loops; dials that should succeed get {@link #WAIT}. */
    public static TunnelConfig.Builder agentConfig(TunnelServer server) {
        return TunnelConfig.builder()
                .proxyServerHost("127.0.0.1")
                .proxyServerPort(server.agentAddress().getPort())
                .agentId("agent-" + System.nanoTime())
                .syncInterval(Duration.ofMillis(50))
                .syncIntervalCap(Duration.ofMillis(400))
                .probeInterval(Duration.ofMillis(200))
                .dialTimeout(WAIT);
    }

    public TunnelServer startServer(TunnelServerConfig config) {
        TunnelServer server = new TunnelServer(config);
        server.start();
        servers.add(server);
        closeables.add(server);
        return server;
    }

    /** An agent with an mTLS-capable client identity from the test PKI. */
    public TunnelClientSet startAgent(TunnelConfig config) {
        return startAgent(config, true, new PrometheusRegistry());
    }

    public TunnelClientSet startAgent(TunnelConfig config, boolean clientCertificate, PrometheusRegistry registry) {
        TunnelClientSet agent = TunnelClientSet.builder(config)
                .tlsMaterial(clientCertificate ? PKI.clientMaterial() : PKI.trustOnlyMaterial())
                .registry(registry)
                .build();
        agent.start();
        agents.add(agent);
        closeables.add(agent);
        return agent;
    }

    public ProxyClient proxyClient(TunnelServer server) {
        ProxyClient.Builder builder = ProxyClient.builder();
        if (server.udsPath() != null) {
            builder.unixSocket(server.udsPath());
        } else {
            builder.tcp(server.frontendAddress(), PKI.clientMaterial());
        }
        ProxyClient client = builder.build();
        closeables.add(client);
        return client;
    }

    public <T extends AutoCloseable> T track(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    /** Dials and waits (bounded) for the tunnel. */
    public static Channel dial(ProxyClient client, String address, ChannelHandler handler) throws Exception {
        return client.dial(address, handler).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    public static Path socketPath(Path dir) {
        return dir.resolve("konnectivity-server.socket");
    }

    public static ClientAuthMode mtls() {
        return ClientAuthMode.REQUIRE;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException("close failed: " + closeables.get(i), e);
            }
        }
        closeables.clear();
    }
}
