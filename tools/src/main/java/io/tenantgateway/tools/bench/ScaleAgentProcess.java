package io.tenantgateway.tools.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.client.TunnelClientSet;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The agent of the scale scenario, alone in its own JVM so that its heap and RSS are the agent's and nothing else's
 * (and so that 10,000 tunnels' sockets on both ends fit the file-descriptor limit). Started by {@link ScaleScenario}
 * with the JVM options of the container image; talks over stdin/stdout, one command per line:
 *
 * <pre>
 * (start)                 → "bench-agent ready"
 * measure                 → "bench-agent measure heap=BYTES rss=BYTES tunnels=N direct=N"  (after full GCs)
 * count                   → "bench-agent count tunnels=N direct=N"
 * direct HOST:PORT N      → "bench-agent direct open=N"   (N more plain sockets, the agent's socket options)
 * close-direct            → "bench-agent direct open=0"
 * exit                    → closes everything and exits 0
 * </pre>
 * Arguments: {@code --host H --port P --ca FILE [--cert FILE --key FILE] [--token FILE] [--identifiers S]}.
 */
public final class ScaleAgentProcess {
    static final String PREFIX = "bench-agent ";

    private ScaleAgentProcess() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        TunnelConfig.Builder config = TunnelConfig.builder()
                .proxyServerHost(options.get("--host"))
                .proxyServerPort(Integer.parseInt(options.get("--port")))
                .caCert(Path.of(options.get("--ca")))
                .agentId("tenant-gateway-bench-scale")
                .dialPolicy(DialPolicy.of(List.of("127.0.0.0/8", "::1/128"), List.of(), List.of(), List.of(),
                        List.of(), List.of()));
        if (options.containsKey("--cert")) {
            config.agentCert(Path.of(options.get("--cert"))).agentKey(Path.of(options.get("--key")));
        }
        if (options.containsKey("--token")) {
            config.serviceAccountTokenPath(Path.of(options.get("--token")));
        }
        if (options.containsKey("--identifiers")) {
            config.agentIdentifiers(AgentIdentifiers.parse(options.get("--identifiers")));
        }
        EventLoopGroup directGroup = Transports.newGroup(1, "bench-direct");
        List<Channel> direct = new ArrayList<>();
        try (TunnelClientSet agent = TunnelClientSet.builder(config.build()).registry(new PrometheusRegistry())
                .build()) {
            agent.start();
            BenchRig.awaitCondition("the agent connects to the server", BenchRig.READY_TIMEOUT, agent::isReady);
            out.println(PREFIX + "ready");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.strip().split(" ");
                switch (words[0]) {
                    case "measure" -> {
                        fullGc();
                        out.println(PREFIX + "measure heap=" + ManagementFactory.getMemoryMXBean()
                                .getHeapMemoryUsage().getUsed() + " rss=" + rssBytes() + " tunnels="
                                + agent.openTunnels() + " direct=" + direct.size());
                    }
                    case "count" -> out.println(PREFIX + "count tunnels=" + agent.openTunnels() + " direct="
                            + direct.size());
                    case "direct" -> {
                        openDirect(directGroup, words[1], Integer.parseInt(words[2]), direct);
                        out.println(PREFIX + "direct open=" + direct.size());
                    }
                    case "close-direct" -> {
                        for (Channel channel : direct) {
                            channel.close().syncUninterruptibly();
                        }
                        direct.clear();
                        out.println(PREFIX + "direct open=0");
                    }
                    case "exit" -> {
                        return;
                    }
                    default -> out.println(PREFIX + "error unknown command: " + line);
                }
            }
        } finally {
            directGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** Plain sockets with the options the agent's dialer uses, so the comparison is about the tunnel's own cost. */
    private static void openDirect(EventLoopGroup group, String hostPort, int count, List<Channel> into) {
        int colon = hostPort.lastIndexOf(':');
        InetSocketAddress target = new InetSocketAddress(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1)));
        int maxRead = TunnelConfig.builder().build().maxDataSize();
        Bootstrap bootstrap = new Bootstrap().group(group).channel(Transports.socketChannel(group))
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1024 * 1024, 2 * 1024 * 1024))
                .option(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(1024, 16384, maxRead))
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public boolean isSharable() {
                        return true;
                    }
                });
        int batch = 256;
        for (int done = 0; done < count; done += batch) {
            List<ChannelFuture> connects = new ArrayList<>();
            for (int i = done; i < Math.min(count, done + batch); i++) {
                connects.add(bootstrap.connect(target));
            }
            for (ChannelFuture connect : connects) {
                into.add(connect.syncUninterruptibly().channel());
            }
        }
    }

    private static void fullGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
    }

    /** VmRSS from /proc/self/status, in bytes (0 where there is no procfs). */
    static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    String[] parts = line.substring(6).strip().split("\\s+");
                    return Long.parseLong(parts[0]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    /** How long the parent waits for one answer. */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(120);
}
