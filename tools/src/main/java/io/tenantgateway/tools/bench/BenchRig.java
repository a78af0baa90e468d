package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a bench run shares: event loops per component (named, so {@link CpuMeter} can tell them apart), a
 * throw-away PKI, the konnectivity-server (in-process, or an external one), the agent, the ProxyService client and
 * the two {@link Route}s. Closes in reverse order of creation.
 *
 * <p>Components and their threads: client {@code bench-client-*} (2 loops, shared by the direct baseline and the
 * ProxyService client), targets {@code bench-target-*} (2 loops), agent {@code bench-agent-*} (as many loops as the
 * agent uses by default: one per core; one server connection runs on one of them), in-process server
 * {@code tunnel-server-bench-*} (its default: one loop per core).
 */
final class BenchRig implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BenchRig.class);
    static final String AGENT = "agent";
    static final String SERVER = "server";
    static final String CLIENT = "client";
    static final String TARGET = "target";
    static final String WEBHOOK = "webhook";
    private static final String SERVER_ID = "bench";
    static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    final Clock clock;
    final Path workDir;
    final BenchPki pki;
    final EventLoopGroup clientGroup;
    final EventLoopGroup targetGroup;
    final EventLoopGroup agentGroup;
    final TunnelServer server;
    final ExternalServer external;
    private final int agentMaxDataSize;
    final ProxyClient proxy;
    final Route direct;
    final Route tunnel;
    final CpuMeter cpu;
    private TunnelClientSet agent;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private BenchRig(BenchConfig config, Clock clock) throws IOException {
        this.clock = requireNonNull(clock, "clock");
        this.external = config.external();
        this.agentMaxDataSize = config.agentMaxDataSize();
        workDir = Files.createTempDirectory("tenant-gateway-bench-");
        closeables.add(this::deleteWorkDir);
        pki = new BenchPki(clock);
        clientGroup = group(2, "bench-client");
        targetGroup = group(2, "bench-target");
        agentGroup = group(Math.max(1, Runtime.getRuntime().availableProcessors()), "bench-agent");
        if (external == null) {
            server = new TunnelServer(TunnelServerConfig.builder(pki.serverMaterial()).serverId(SERVER_ID)
                    .serverCount(1)
                    .agentAddress(new InetSocketAddress("127.0.0.1", 0))
                    .agentClientAuth(ClientAuthMode.REQUIRE)
                    .udsPath(workDir.resolve("konnectivity-server.socket"))
                    .build(), clock);
            server.start();
            closeables.add(server);
        } else {
            server = null;
        }
        proxy = track(proxyClient());
        direct = Route.direct(clientGroup);
        tunnel = Route.tunnel(proxy);
        Map<String, String> prefixes = new LinkedHashMap<>();
        prefixes.put(AGENT, "bench-agent-");
        prefixes.put(SERVER, "tunnel-server-" + SERVER_ID + "-");
        prefixes.put(CLIENT, "bench-client-");
        prefixes.put(TARGET, "bench-target-");
        prefixes.put(WEBHOOK, "vert.x-eventloop-thread-");
        cpu = new CpuMeter(prefixes);
    }

    static BenchRig start(BenchConfig config, Clock clock) throws IOException {
        BenchRig rig = new BenchRig(config, clock);
        try {
            rig.startAgent();
            return rig;
        } catch (RuntimeException e) {
            rig.close();
            throw e;
        }
    }

    private EventLoopGroup group(int threads, String name) {
        EventLoopGroup group = Transports.newGroup(threads, name);
        closeables.add(() -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        return group;
    }

    private <T extends AutoCloseable> T track(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private ProxyClient proxyClient() {
        ProxyClient.Builder builder = ProxyClient.builder().eventLoopGroup(clientGroup).connections(2);
        if (external == null) {
            builder.unixSocket(server.udsPath());
        } else if (external.frontendUds() != null) {
            builder.unixSocket(external.frontendUds());
        } else {
            TlsMaterial tls = TlsMaterial.of(Pem.readBundle(external.frontendCert(), external.frontendKey()),
                    Pem.readTrustBundle(external.frontendCa()));
            builder.tcp(InetSocketAddress.createUnresolved(external.frontendHost(), external.frontendPort()), tls)
                    .clock(clock);
        }
        return builder.build();
    }

    /** The agent under test, connected to the server; waits until it is ready. */
    void startAgent() {
        if (agent != null) {
            return;
        }
        TunnelConfig.Builder config = agentConfig();
        TunnelClientSet.Builder builder;
        if (external == null) {
            builder = TunnelClientSet.builder(config.build()).tlsMaterial(pki.agentMaterial());
        } else {
            builder = TunnelClientSet.builder(config.caCert(external.caCert()).agentCert(external.agentCert())
                    .agentKey(external.agentKey()).serviceAccountTokenPath(external.tokenPath()).build());
        }
        agent = builder.registry(new PrometheusRegistry()).eventLoopGroup(agentGroup).clock(clock).build();
        agent.start();
        awaitCondition("the agent connects to the server", READY_TIMEOUT, () -> agent.isReady()
                && (server == null || server.agentCount() == 1));
    }

    /** Closes the in-process agent (the scale scenario runs its agent in a child process). */
    void stopAgent() {
        if (agent != null) {
            agent.close();
            agent = null;
            if (server != null) {
                awaitCondition("the server forgets the closed agent", READY_TIMEOUT, () -> server.agentCount() == 0);
            }
        }
    }

    TunnelClientSet agent() {
        if (agent == null) {
            throw new IllegalStateException("the in-process agent is stopped");
        }
        return agent;
    }

    /**
     * The agent's configuration: upstream defaults except loopback-only dials (the bench never reaches anything
     * else) and a fixed id.
     */
    TunnelConfig.Builder agentConfig() {
        TunnelConfig.Builder config = TunnelConfig.builder()
                .agentId("tenant-gateway-bench")
                .dialPolicy(DialPolicy.of(List.of("127.0.0.0/8", "::1/128"), List.of(), List.of(), List.of(),
                        List.of(), List.of()));
        if (agentMaxDataSize > 0) {
            config.maxDataSize(agentMaxDataSize);
        }
        if (external == null) {
            config.proxyServerHost("127.0.0.1").proxyServerPort(server.agentAddress().getPort());
        } else {
            config.proxyServerHost(external.host()).proxyServerPort(external.port());
            if (!external.agentIdentifiers().isEmpty()) {
                config.agentIdentifiers(AgentIdentifiers.parse(external.agentIdentifiers()));
            }
        }
        return config;
    }

    /** What the report says about the server. */
    String serverDescription() {
        return external == null ? "in-process Java konnectivity-server (mTLS agent leg, Unix-socket frontend)"
                : "external " + external.describe();
    }

    /** Polls {@code condition} (every 10 ms) until it holds; fails after {@code timeout} naming {@code what}. */
    static void awaitCondition(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + timeout.toSeconds() + "s waiting until " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            if (Thread.interrupted()) {
                throw new IllegalStateException("interrupted while waiting until " + what);
            }
        }
    }

    @Override
    public void close() {
        if (agent != null) {
            agent.close();
            agent = null;
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                log.warn("bench: closing {} failed: {}", closeables.get(i), e.toString());
            }
        }
        closeables.clear();
    }

    private void deleteWorkDir() throws IOException {
        if (!Files.exists(workDir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(workDir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
