package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * dial: {@code dials} sequential round trips of connect (through the tunnel: DIAL_REQ … DIAL_RSP), one byte to an
 * echo target and back, and close; p50 and p99 of the whole round trip. Baseline: the same over a direct loopback
 * connection. Runs of both alternate; the report gives the median of the per-run percentiles.
 */
final class DialScenario {
    private static final double MICROS = 1_000;

    private final BenchRig rig;
    private final BenchSizes sizes;

    DialScenario(BenchRig rig, BenchSizes sizes) {
        this.rig = requireNonNull(rig, "rig");
        this.sizes = requireNonNull(sizes, "sizes");
    }

    ScenarioResult run() throws Exception {
        try (LoopbackTarget echo = LoopbackTarget.echo(rig.targetGroup)) {
            Map<String, List<LatencyRun>> runs = new LinkedHashMap<>();
            Map<String, Long> echoes = new LinkedHashMap<>();
            for (Route route : List.of(rig.direct, rig.tunnel)) {
                runs.put(route.name(), new ArrayList<>());
                echoes.put(route.name(), 0L);
            }
            int warmupDials = Math.max(1, sizes.dials() / 4);
            for (int i = 0; i < sizes.warmups(); i++) {
                for (Route route : List.of(rig.direct, rig.tunnel)) {
                    echoes.merge(route.name(), (long) measure(route, echo, warmupDials).latencies().length, Long::sum);
                }
            }
            for (int i = 0; i < sizes.repeats(); i++) {
                for (Route route : List.of(rig.direct, rig.tunnel)) {
                    LatencyRun run = measure(route, echo, sizes.dials());
                    runs.get(route.name()).add(run);
                    echoes.merge(route.name(), (long) run.latencies().length, Long::sum);
                }
            }
            List<LatencyRun> tunnel = runs.get("tunnel");
            List<LatencyRun> direct = runs.get("direct");
            double tunnelP50 = Stats.median(tunnel.stream().map(LatencyRun::p50Millis).toList());
            double directP50 = Stats.median(direct.stream().map(LatencyRun::p50Millis).toList());
            double tunnelP99 = Stats.median(tunnel.stream().map(LatencyRun::p99Millis).toList());
            double directP99 = Stats.median(direct.stream().map(LatencyRun::p99Millis).toList());
            double agentMicrosPerDial = Stats.median(tunnel.stream()
                    .map(r -> r.cpu().cpu(BenchRig.AGENT) / MICROS / r.latencies().length).toList());
            double processMicrosTunnel = Stats.median(tunnel.stream()
                    .map(r -> r.cpu().cpu(CpuMeter.PROCESS) / MICROS / r.latencies().length).toList());
            double processMicrosDirect = Stats.median(direct.stream()
                    .map(r -> r.cpu().cpu(CpuMeter.PROCESS) / MICROS / r.latencies().length).toList());
            List<Figure> figures = List.of(
                    Figure.compared("p50 dial+echo+close", "ms", tunnelP50, directP50, "direct"),
                    Figure.comparedWithTarget("p99 dial+echo+close", "ms", tunnelP99, directP99, "direct",
                            "p99 <= direct p99 + 1 ms", tunnelP99 <= directP99 + 1.0),
                    Figure.compared("agent CPU per dial", "cpu-us", agentMicrosPerDial, processMicrosDirect,
                            "direct, all CPU"),
                    Figure.compared("all CPU per dial", "cpu-us", processMicrosTunnel, processMicrosDirect, "direct"));
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("dialsPerRun", sizes.dials());
            details.put("echoes", echoes);
            details.put("targetAccepted", echo.accepted());
            details.put("runsP99Millis", Map.of("tunnel", tunnel.stream().map(LatencyRun::p99Millis).toList(),
                    "direct", direct.stream().map(LatencyRun::p99Millis).toList()));
            String limits = String.format(Locale.ROOT, "latency, not CPU: one dial at a time; the tunnel adds the"
                    + " DIAL_REQ/DIAL_RSP round trip through the server plus the agent's own connect"
                    + " (%.0f us of all CPU per dial vs %.0f us direct)", processMicrosTunnel, processMicrosDirect);
            return new ScenarioResult(Scenario.DIAL, figures, limits, details);
        }
    }

    private LatencyRun measure(Route route, LoopbackTarget echo, int dials) throws Exception {
        long[] latencies = new long[dials];
        CpuMeter.Sample before = rig.cpu.sample();
        for (int i = 0; i < dials; i++) {
            EchoProbe probe = new EchoProbe();
            long start = System.nanoTime();
            Channel channel;
            try {
                channel = route.connect(echo.address(), probe).get(10, TimeUnit.SECONDS);
                channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1}));
                probe.echoed.get(10, TimeUnit.SECONDS);
                channel.close().get(10, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException(route.name() + " dial " + (i + 1) + "/" + dials + " to "
                        + echo.hostPort() + " failed: " + (e.getCause() != null ? e.getCause() : e), e);
            }
            latencies[i] = System.nanoTime() - start;
        }
        return new LatencyRun(latencies, rig.cpu.sample().since(before));
    }

    /** Completes when the one echoed byte is back. */
    private static final class EchoProbe extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Void> echoed = new CompletableFuture<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf data = (ByteBuf) msg;
            try {
                if (data.readableBytes() == 1 && data.getByte(data.readerIndex()) == 1) {
                    echoed.complete(null);
                } else {
                    echoed.completeExceptionally(new IOException("echo returned " + data.readableBytes()
                            + " bytes (expected: the one byte sent)"));
                }
            } finally {
                data.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            echoed.completeExceptionally(new IOException("closed before the echo arrived"));
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            echoed.completeExceptionally(cause);
            ctx.close();
        }
    }
}
