package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.tenantgateway.tunnel.client.TunnelSnapshot;
import java.time.Duration;
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
 * bulk, parallel and isolation: timed transfers with a {@link LoopbackTarget#transfer} target, through the tunnel
 * and (for the baseline) straight to the target. Direct and tunnel runs alternate so that drift on a shared
 * machine hits both alike. Every run checks its byte counts on both ends and fails the scenario if one is off.
 */
final class ThroughputScenarios {
    private static final double MIB = 1024 * 1024;
    private static final double GIB = 1024 * MIB;

    private final BenchRig rig;
    private final BenchSizes sizes;
    private final int cores = Runtime.getRuntime().availableProcessors();

    ThroughputScenarios(BenchRig rig, BenchSizes sizes) {
        this.rig = requireNonNull(rig, "rig");
        this.sizes = requireNonNull(sizes, "sizes");
    }

    /** One timed transfer over {@code connections} connections. */
    record Run(long wallNanos, long up, long down, CpuMeter.Usage cpu) {
        double mibPerSecond() {
            return (up + down) / MIB / (wallNanos / 1e9);
        }

        double cpuSecondsPerGib(String component) {
            return cpu.cpu(component) / 1e9 / ((up + down) / GIB);
        }
    }

    /** Byte counts of every run of one mode, for the report's proof that all bytes arrived. */
    static final class ByteLedger {
        long runs;
        long expectedUp;
        long expectedDown;
        long clientSent;
        long clientReceived;
        long targetReceived;
        long targetSent;

        Map<String, Object> toMap() {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("runs", runs);
            map.put("expectedUp", expectedUp);
            map.put("clientSent", clientSent);
            map.put("targetReceived", targetReceived);
            map.put("expectedDown", expectedDown);
            map.put("targetSent", targetSent);
            map.put("clientReceived", clientReceived);
            return map;
        }
    }

    ScenarioResult bulk() throws Exception {
        return compare(Scenario.BULK, 1, sizes.bulkBytes());
    }

    ScenarioResult parallel() throws Exception {
        return compare(Scenario.PARALLEL, sizes.parallelConnections(), sizes.parallelBytes());
    }

    private ScenarioResult compare(Scenario scenario, int connections, long bytesEachWay) throws Exception {
        try (LoopbackTarget target = LoopbackTarget.transfer(rig.targetGroup)) {
            Map<String, List<Run>> runs = new LinkedHashMap<>();
            Map<String, ByteLedger> ledgers = new LinkedHashMap<>();
            for (Route route : List.of(rig.direct, rig.tunnel)) {
                runs.put(route.name(), new ArrayList<>());
                ledgers.put(route.name(), new ByteLedger());
            }
            for (int i = 0; i < sizes.warmups() + sizes.repeats(); i++) {
                for (Route route : List.of(rig.direct, rig.tunnel)) {
                    Run run = transfer(route, target, connections, bytesEachWay, bytesEachWay,
                            ledgers.get(route.name()));
                    if (i >= sizes.warmups()) {
                        runs.get(route.name()).add(run);
                    }
                }
            }
            List<Run> tunnelRuns = runs.get("tunnel");
            List<Run> directRuns = runs.get("direct");
            double tunnelRate = Stats.median(tunnelRuns.stream().map(Run::mibPerSecond).toList());
            double directRate = Stats.median(directRuns.stream().map(Run::mibPerSecond).toList());
            double agentCpu = Stats.median(tunnelRuns.stream().map(r -> r.cpuSecondsPerGib(BenchRig.AGENT)).toList());
            double tunnelProcessCpu = Stats.median(tunnelRuns.stream()
                    .map(r -> r.cpuSecondsPerGib(CpuMeter.PROCESS)).toList());
            double directProcessCpu = Stats.median(directRuns.stream()
                    .map(r -> r.cpuSecondsPerGib(CpuMeter.PROCESS)).toList());
            List<Figure> figures = List.of(
                    Figure.ratioAtLeast("throughput", "MiB/s", tunnelRate, directRate, "direct", 0.5),
                    Figure.compared("agent CPU per GiB", "cpu-s/GiB", agentCpu, directProcessCpu,
                            "direct, all CPU"),
                    Figure.compared("all CPU per GiB", "cpu-s/GiB", tunnelProcessCpu, directProcessCpu, "direct"));
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("connections", connections);
            details.put("bytesEachWayPerConnection", bytesEachWay);
            details.put("runsMiBPerSecond", Map.of(
                    "tunnel", tunnelRuns.stream().map(Run::mibPerSecond).toList(),
                    "direct", directRuns.stream().map(Run::mibPerSecond).toList()));
            details.put("cpuShareOfAllCores", Map.of("tunnel", shares(medianRun(tunnelRuns)),
                    "direct", shares(medianRun(directRuns))));
            Map<String, Object> bytes = new LinkedHashMap<>();
            ledgers.forEach((mode, ledger) -> bytes.put(mode, ledger.toMap()));
            details.put("bytes", bytes);
            return new ScenarioResult(scenario, figures, limits(medianRun(tunnelRuns), medianRun(directRuns)),
                    details);
        }
    }

    ScenarioResult isolation() throws Exception {
        long bytes = sizes.isolationBytes();
        try (LoopbackTarget target = LoopbackTarget.transfer(rig.targetGroup);
                LoopbackTarget stalled = LoopbackTarget.stalled(rig.targetGroup)) {
            ByteLedger ledger = new ByteLedger();
            List<Run> alone = new ArrayList<>();
            List<Run> besideStalled = new ArrayList<>();
            for (int i = 0; i < sizes.warmups() + sizes.repeats(); i++) {
                Run run = transfer(rig.tunnel, target, 1, bytes, bytes, ledger);
                if (i >= sizes.warmups()) {
                    alone.add(run);
                }
            }
            TransferClient a = new TransferClient(Long.MAX_VALUE, 0);
            Channel channelA = rig.tunnel.connect(stalled.address(), a).get(30, TimeUnit.SECONDS);
            long stalledSent;
            long agentBuffered;
            try {
                a.start();
                long window = rig.agentConfig().build().flowControlWindow();
                BenchRig.awaitCondition("tunnel A's buffers fill up behind its stalled target", Duration.ofSeconds(60),
                        () -> !channelA.isWritable() && bufferedToward(stalled) >= window / 2);
                stalledSent = a.sent();
                agentBuffered = bufferedToward(stalled);
                for (int i = 0; i < sizes.repeats(); i++) {
                    besideStalled.add(transfer(rig.tunnel, target, 1, bytes, bytes, ledger));
                }
                if (stalled.received() != 0) {
                    throw new IllegalStateException("the stalled target read " + stalled.received() + " bytes");
                }
            } finally {
                channelA.close().syncUninterruptibly();
            }
            for (int i = 0; i < sizes.repeats(); i++) {
                alone.add(transfer(rig.tunnel, target, 1, bytes, bytes, ledger));
            }
            double aloneRate = Stats.median(alone.stream().map(Run::mibPerSecond).toList());
            double stalledRate = Stats.median(besideStalled.stream().map(Run::mibPerSecond).toList());
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("bytesEachWay", bytes);
            details.put("runsMiBPerSecond", Map.of("bAlone", alone.stream().map(Run::mibPerSecond).toList(),
                    "bWithAStalled", besideStalled.stream().map(Run::mibPerSecond).toList()));
            details.put("aSentBeforeStall", stalledSent);
            details.put("aBufferedOnAgent", agentBuffered);
            details.put("stalledTargetReceived", stalled.received());
            details.put("bytes", Map.of("tunnel", ledger.toMap()));
            details.put("cpuShareOfAllCores", Map.of("bWithAStalled", shares(medianRun(besideStalled)),
                    "bAlone", shares(medianRun(alone))));
            String limits = String.format(Locale.ROOT, "A holds %s on the agent (its window) and sends nothing"
                    + " more; B is limited as in bulk: %s", mib(agentBuffered), cpuText(medianRun(besideStalled)));
            return new ScenarioResult(Scenario.ISOLATION, List.of(Figure.ratioAtLeast("B throughput", "MiB/s",
                    stalledRate, aloneRate, "B alone", 0.9)), limits, details);
        }
    }

    private long bufferedToward(LoopbackTarget target) {
        return rig.agent().snapshot().tunnels().stream().filter(t -> t.address().equals(target.hostPort()))
                .mapToLong(TunnelSnapshot::bufferedToTarget).sum();
    }

    /** Connects, then times the transfer alone (dials are the dial scenario's business). */
    Run transfer(Route route, LoopbackTarget target, int connections, long up, long down, ByteLedger ledger)
            throws Exception {
        List<TransferClient> clients = new ArrayList<>(connections);
        List<CompletableFuture<Channel>> connects = new ArrayList<>(connections);
        for (int i = 0; i < connections; i++) {
            TransferClient client = new TransferClient(up, down);
            clients.add(client);
            connects.add(route.connect(target.address(), client));
        }
        List<Channel> channels = new ArrayList<>(connections);
        try {
            for (CompletableFuture<Channel> connect : connects) {
                channels.add(connect.get(30, TimeUnit.SECONDS));
            }
            long targetReceivedBefore = target.received();
            long targetSentBefore = target.sent();
            CpuMeter.Sample before = rig.cpu.sample();
            clients.forEach(TransferClient::start);
            long timeoutMillis = Math.max(60_000, (up + down) * connections / (4L * 1024 * 1024) * 1000);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            for (TransferClient client : clients) {
                try {
                    client.done().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException(route.name() + " transfer of " + up + " bytes up and " + down
                            + " down on " + connections + " connection(s) failed: sent " + client.sent()
                            + ", received " + client.received() + ": " + (e.getCause() != null ? e.getCause() : e), e);
                }
            }
            CpuMeter.Usage usage = rig.cpu.sample().since(before);
            long sent = clients.stream().mapToLong(TransferClient::sent).sum();
            long received = clients.stream().mapToLong(TransferClient::received).sum();
            long targetReceived = target.received() - targetReceivedBefore;
            long targetSent = target.sent() - targetSentBefore;
            long expectedUp = up * connections;
            long expectedDown = down * connections;
            ledger.runs++;
            ledger.expectedUp += expectedUp;
            ledger.expectedDown += expectedDown;
            ledger.clientSent += sent;
            ledger.clientReceived += received;
            ledger.targetReceived += targetReceived;
            ledger.targetSent += targetSent;
            if (sent != expectedUp || targetReceived != expectedUp || targetSent != expectedDown
                    || received != expectedDown) {
                throw new IllegalStateException(route.name() + " transfer lost bytes: up " + sent + " sent / "
                        + targetReceived + " received (expected: " + expectedUp + "), down " + targetSent + " sent / "
                        + received + " received (expected: " + expectedDown + ")");
            }
            return new Run(usage.wallNanos(), expectedUp, expectedDown, usage);
        } finally {
            for (CompletableFuture<Channel> connect : connects) {
                connect.thenAccept(Channel::close);
            }
            for (Channel channel : channels) {
                channel.closeFuture().await(10, TimeUnit.SECONDS);
            }
        }
    }

    private static Run medianRun(List<Run> runs) {
        List<Run> sorted = new ArrayList<>(runs);
        sorted.sort((x, y) -> Double.compare(x.mibPerSecond(), y.mibPerSecond()));
        return sorted.get(sorted.size() / 2);
    }

    private Map<String, Object> shares(Run run) {
        Map<String, Object> map = new LinkedHashMap<>();
        run.cpu().cpuNanos().keySet().forEach(component -> map.put(component,
                round(run.cpu().share(component, cores))));
        return map;
    }

    private String limits(Run tunnel, Run direct) {
        return "tunnel: " + cpuText(tunnel) + "; direct: " + cpuText(direct);
    }

    /** "CPU 97% of 2 cores (agent 21%, server 38%, ...)". */
    String cpuText(Run run) {
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "CPU %.0f%% of %d cores (",
                100 * run.cpu().share(CpuMeter.PROCESS, cores), cores));
        boolean first = true;
        for (String component : run.cpu().cpuNanos().keySet()) {
            if (component.equals(CpuMeter.PROCESS) || run.cpu().cpu(component) == 0) {
                continue;
            }
            text.append(first ? "" : ", ").append(component).append(' ')
                    .append(String.format(Locale.ROOT, "%.0f%%", 100 * run.cpu().share(component, cores)));
            first = false;
        }
        return text.append(')').toString();
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / MIB);
    }

    static double round(double value) {
        return Math.round(value * 1000) / 1000.0;
    }
}
