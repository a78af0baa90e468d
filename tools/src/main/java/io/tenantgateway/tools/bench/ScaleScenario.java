package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.tenantgateway.tools.bench.BenchPki.AgentFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * scale: opens 1,000 / 5,000 / 10,000 idle tunnels and measures the agent's heap (used heap after full GCs) and
 * RSS per tunnel. The agent runs alone in a child JVM ({@link ScaleAgentProcess}) with the container image's JVM
 * options, so the figures are the agent's own. Baseline: the same number of bare Netty sockets, opened by the same
 * child with the agent's socket options, i.e. what holding the target connections costs without any tunnel.
 * Also reported: what the rest (this process: ProxyService client, server and targets) holds per tunnel.
 */
final class ScaleScenario {
    private static final double KIB = 1024;
    /** Dials in flight at once while opening tunnels. */
    private static final int DIAL_BATCH = 500;
    /**
     * A fixed large heap, so that heap sizing does not shape the per-tunnel figures (the footprint scenario measures
     * {@code run} with the launcher's real options).
     */
    static final List<String> CHILD_JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-Xmx1g", "-Xss512k",
            "-XX:-UsePerfData");

    private final BenchRig rig;
    private final BenchSizes sizes;

    ScaleScenario(BenchRig rig, BenchSizes sizes) {
        this.rig = requireNonNull(rig, "rig");
        this.sizes = requireNonNull(sizes, "sizes");
    }

    private record Measure(long heap, long rss, int tunnels, int direct) {
    }

    ScenarioResult run() throws Exception {
        rig.stopAgent(); // the server must route every dial to the child's agent
        List<Figure> figures = new ArrayList<>();
        Map<String, Object> steps = new LinkedHashMap<>();
        try (LoopbackTarget idle = LoopbackTarget.idle(rig.targetGroup);
                ChildAgent child = ChildAgent.start(rig)) {
            // Bare sockets first, from a fresh JVM; then the tunnels, measured from the state the sockets left
            // (Netty's per-loop tables already grown), so each delta is what its own connections hold.
            // Warm-up: a first batch of sockets settles what the JVM allocates once (class init, caches, tables),
            // which otherwise shows up as noise of about a megabyte in the smallest step.
            child.openDirect(idle.hostPort(), Math.min(500, sizes.scaleSteps().get(0)));
            child.closeDirect();
            BenchRig.awaitCondition("the warm-up sockets are closed on the target", BenchRig.READY_TIMEOUT,
                    () -> idle.openConnections() == 0);
            Measure directBase = child.measure();
            Map<Integer, Measure> directMeasures = new LinkedHashMap<>();
            for (int step : sizes.scaleSteps()) {
                Measure measure = child.openDirect(idle.hostPort(), step - child.count().direct());
                if (measure.direct() != step) {
                    throw new IllegalStateException("the child holds " + measure.direct() + " sockets (expected: "
                            + step + ")");
                }
                directMeasures.put(step, child.measure());
            }
            child.closeDirect();
            BenchRig.awaitCondition("the bare sockets are closed on the target", BenchRig.READY_TIMEOUT,
                    () -> idle.openConnections() == 0);

            Measure base = child.measure();
            long parentBase = parentHeapAfterGc();
            List<Channel> tunnels = new ArrayList<>();
            Map<Integer, Measure> tunnelMeasures = new LinkedHashMap<>();
            Map<Integer, Long> parentHeap = new LinkedHashMap<>();
            try {
                for (int step : sizes.scaleSteps()) {
                    openTunnels(idle, step - tunnels.size(), tunnels);
                    Measure measure = child.measure();
                    if (measure.tunnels() != step) {
                        throw new IllegalStateException("the agent holds " + measure.tunnels() + " tunnels"
                                + " (expected: " + step + ")");
                    }
                    tunnelMeasures.put(step, measure);
                    parentHeap.put(step, parentHeapAfterGc() - parentBase);
                }
            } finally {
                for (Channel channel : tunnels) {
                    channel.close();
                }
                for (Channel channel : tunnels) {
                    channel.closeFuture().await(30, TimeUnit.SECONDS);
                }
            }
            BenchRig.awaitCondition("every tunnel is closed on the agent and the target", BenchRig.READY_TIMEOUT,
                    () -> child.count().tunnels() == 0 && idle.openConnections() == 0);

            int largest = sizes.scaleSteps().get(sizes.scaleSteps().size() - 1);
            for (int step : sizes.scaleSteps()) {
                Measure tunnel = tunnelMeasures.get(step);
                Measure direct = directMeasures.get(step);
                double heapPerTunnel = (tunnel.heap() - base.heap()) / KIB / step;
                double heapPerSocket = (direct.heap() - directBase.heap()) / KIB / step;
                double rssPerTunnel = (tunnel.rss() - base.rss()) / KIB / step;
                double rssPerSocket = (direct.rss() - directBase.rss()) / KIB / step;
                figures.add(Figure.comparedWithTarget("agent heap per tunnel @" + step, "KiB", heapPerTunnel,
                        heapPerSocket, "bare socket", "<= 16 KiB", heapPerTunnel <= 16));
                figures.add(Figure.compared("agent RSS per tunnel @" + step, "KiB", rssPerTunnel, rssPerSocket,
                        "bare socket"));
                Map<String, Object> detail = new LinkedHashMap<>();
                detail.put("agentTunnels", tunnel.tunnels());
                detail.put("agentHeapBytes", tunnel.heap() - base.heap());
                detail.put("agentRssBytes", tunnel.rss() - base.rss());
                detail.put("bareSockets", direct.direct());
                detail.put("bareSocketHeapBytes", direct.heap() - directBase.heap());
                detail.put("bareSocketRssBytes", direct.rss() - directBase.rss());
                detail.put("restHeapBytes", parentHeap.get(step));
                steps.put(Integer.toString(step), detail);
            }
            figures.add(Figure.alone("tunnels open", "tunnels", tunnelMeasures.get(largest).tunnels(),
                    largest + " open without error", tunnelMeasures.get(largest).tunnels() == largest));
            figures.add(Figure.alone("rest heap per tunnel @" + largest, "KiB",
                    parentHeap.get(largest) / KIB / largest, "", null));
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("steps", steps);
            details.put("agentBaseHeapBytes", base.heap());
            details.put("agentBaseRssBytes", base.rss());
            details.put("childJvmOptions", CHILD_JVM_OPTIONS);
            details.put("targetAccepted", idle.accepted());
            Measure top = tunnelMeasures.get(largest);
            String limits = String.format(Locale.ROOT, "memory, not CPU: at %d tunnels the agent JVM holds %.1f MiB"
                    + " of live heap in all (%.1f MiB for the tunnels) and %.1f MiB RSS; per tunnel: one target"
                    + " socket (Netty channel, pipeline, native fd) plus the tunnel's state", largest,
                    top.heap() / KIB / KIB, (top.heap() - base.heap()) / KIB / KIB, top.rss() / KIB / KIB);
            return new ScenarioResult(Scenario.SCALE, figures, limits, details);
        }
    }

    private void openTunnels(LoopbackTarget target, int count, List<Channel> into) throws Exception {
        for (int done = 0; done < count; done += DIAL_BATCH) {
            List<CompletableFuture<Channel>> dials = new ArrayList<>();
            for (int i = done; i < Math.min(count, done + DIAL_BATCH); i++) {
                dials.add(rig.tunnel.connect(target.address(), new ChannelInboundHandlerAdapter()));
            }
            for (CompletableFuture<Channel> dial : dials) {
                try {
                    into.add(dial.get(60, TimeUnit.SECONDS));
                } catch (ExecutionException | TimeoutException e) {
                    dials.forEach(d -> d.thenAccept(Channel::close));
                    throw new IllegalStateException("opening tunnel " + (into.size() + 1) + " to "
                            + target.hostPort() + " failed: " + (e.getCause() != null ? e.getCause() : e), e);
                }
            }
        }
    }

    private static long parentHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** The child JVM running {@link ScaleAgentProcess}; answers are read by a daemon thread into a queue. */
    private static final class ChildAgent implements AutoCloseable {
        private final Process process;
        private final Writer commands;
        private final BlockingQueue<String> answers = new ArrayBlockingQueue<>(64);
        private final Path log;

        private ChildAgent(Process process, Path log) {
            this.process = process;
            this.log = log;
            this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = out.readLine()) != null) {
                        if (line.startsWith(ScaleAgentProcess.PREFIX)) {
                            answers.put(line.substring(ScaleAgentProcess.PREFIX.length()));
                        }
                    }
                } catch (IOException e) {
                    answers.offer("error reading the child's output: " + e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "bench-scale-child-reader");
            reader.setDaemon(true);
            reader.start();
        }

        static ChildAgent start(BenchRig rig) throws IOException, InterruptedException {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(CHILD_JVM_OPTIONS);
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(ScaleAgentProcess.class.getName());
            if (rig.external == null) {
                AgentFiles files = rig.pki.writeAgentFiles(rig.workDir);
                command.addAll(List.of("--host", "127.0.0.1", "--port",
                        Integer.toString(rig.server.agentAddress().getPort()), "--ca", files.caCert().toString(),
                        "--cert", files.agentCert().toString(), "--key", files.agentKey().toString()));
            } else {
                ExternalServer server = rig.external;
                command.addAll(List.of("--host", server.host(), "--port", Integer.toString(server.port()), "--ca",
                        server.caCert().toString()));
                if (server.agentCert() != null) {
                    command.addAll(List.of("--cert", server.agentCert().toString(), "--key",
                            server.agentKey().toString()));
                }
                if (server.tokenPath() != null) {
                    command.addAll(List.of("--token", server.tokenPath().toString()));
                }
                if (!server.agentIdentifiers().isEmpty()) {
                    command.addAll(List.of("--identifiers", server.agentIdentifiers()));
                }
            }
            Path log = rig.workDir.resolve("scale-agent.log");
            Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
            ChildAgent child = new ChildAgent(process, log);
            try {
                child.expect("ready");
            } catch (RuntimeException e) {
                child.close();
                throw e;
            }
            return child;
        }

        Measure measure() {
            return parse(ask("measure", "measure "));
        }

        Measure count() {
            return parse(ask("count", "count "));
        }

        Measure openDirect(String hostPort, int count) {
            ask("direct " + hostPort + " " + count, "direct ");
            return count();
        }

        void closeDirect() {
            ask("close-direct", "direct ");
        }

        private String ask(String command, String answerPrefix) {
            try {
                commands.write(command + "\n");
                commands.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot send \"" + command + "\" to the scale agent process (log "
                        + log + ")", e);
            }
            String answer = expect(answerPrefix);
            return answer.substring(answerPrefix.length());
        }

        private String expect(String prefix) {
            String answer;
            try {
                answer = answers.poll(ScaleAgentProcess.ANSWER_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the scale agent process", e);
            }
            if (answer == null || !answer.startsWith(prefix)) {
                throw new IllegalStateException("scale agent process answered " + (answer == null ? "nothing within "
                        + ScaleAgentProcess.ANSWER_TIMEOUT.toSeconds() + "s" : "\"" + answer + "\"") + " (expected: "
                        + prefix.strip() + "); exit " + (process.isAlive() ? "-" : process.exitValue())
                        + ", log " + log);
            }
            return answer;
        }

        private static Measure parse(String answer) {
            Map<String, Long> values = new LinkedHashMap<>();
            for (String word : answer.strip().split(" ")) {
                int equals = word.indexOf('=');
                if (equals > 0) {
                    values.put(word.substring(0, equals), Long.parseLong(word.substring(equals + 1)));
                }
            }
            return new Measure(values.getOrDefault("heap", 0L), values.getOrDefault("rss", 0L),
                    values.getOrDefault("tunnels", 0L).intValue(), values.getOrDefault("direct", 0L).intValue());
        }

        @Override
        public void close() {
            try {
                commands.write("exit\n");
                commands.flush();
            } catch (IOException e) {
                // the child is gone already; destroy() below makes sure
            }
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
