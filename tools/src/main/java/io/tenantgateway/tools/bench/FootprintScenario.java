package io.tenantgateway.tools.bench;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.netty.channel.Channel;
import io.tenantgateway.agent.ops.ListeningLog;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.tools.bench.BenchPki.AgentFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * footprint: the agent as the image runs it. Starts {@code run} as a child process through the real launcher
 * ({@code bin/proxy-agent}, the image's JVM options: the launcher's defaults, nothing from this process's
 * environment) against the in-process Java konnectivity-server, twice: a pure tunnel, and with every part on (mock
 * devices, lock controller and webhook against a CRUD mock API in this process). For each it reports exec →
 * connected (the server registers the agent), RSS 3 s after connecting (0.5 s with {@code --quick}), RSS after 1 GiB through 64 tunnels and
 * after a second GiB, the agent's CPU seconds per GiB for each, the classes loaded when idle ({@code jcmd PID
 * VM.metaspace}, so that a change that loads more on the tunnel path shows), and the JVM's own account (NMT summary,
 * from a second child started with {@code -XX:NativeMemoryTracking=summary} and the same load). Baseline, in the same
 * run: {@link FootprintFloor}, a bare JVM with the same options running only a Netty server that the same load
 * reaches directly.
 *
 * <p>CPU is {@code utime + stime} of the child from {@code /proc/PID/stat} (USER_HZ = 100: 10 ms resolution); RSS
 * is {@code VmRSS} from {@code /proc/PID/status}. Linux only.
 */
final class FootprintScenario {
    private static final double MIB = 1024 * 1024;
    private static final double GIB = 1024 * MIB;
    private static final int TUNNELS = 64;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final long USER_HZ = 100;
    private static final String NMT = "-XX:NativeMemoryTracking=summary";

    private final BenchRig rig;
    private final BenchSizes sizes;
    private final Path launcher;
    private final String javaOptions;

    /** @param javaOptions JVM options added to the agent's (JAVA_OPTS), for tuning experiments; usually "" */
    FootprintScenario(BenchRig rig, BenchSizes sizes, Path launcher, String javaOptions) {
        this.rig = requireNonNull(rig, "rig");
        this.sizes = requireNonNull(sizes, "sizes");
        this.launcher = requireNonNull(launcher, "launcher");
        this.javaOptions = requireNonNull(javaOptions, "javaOptions");
    }

    /** Which parts the child runs. */
    enum Mode {
        PURE("pure tunnel"), ALL("all parts");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    /** What one child went through. */
    record Measured(double startSeconds, List<Double> startRuns, long rssIdle, long rssFirst, long rssSecond,
            long hwm, double cpuFirst, double cpuSecond, Map<String, Object> nmtIdle, Map<String, Object> nmtLoaded,
            List<String> jvmOptions, Map<String, Object> classesIdle, Map<String, Object> classesLoaded) {
    }

    ScenarioResult run() throws Exception {
        if (rig.external != null) {
            throw new IllegalStateException("footprint starts its own agents against the in-process server: run it"
                    + " without --server");
        }
        rig.stopAgent(); // the server must route every dial to the child's agent
        Map<String, Object> details = new LinkedHashMap<>();
        List<Figure> figures = new ArrayList<>();
        try (LoopbackTarget target = LoopbackTarget.transfer(rig.targetGroup)) {
            Measured pure = measure(Mode.PURE, target, null);
            Measured all;
            try (MockApi api = MockApi.start(rig.workDir)) {
                all = measure(Mode.ALL, target, api);
            }
            Measured floor = measureFloor(pure.jvmOptions());
            add(figures, Mode.PURE, pure, floor, 0.5, 64, 96, 4500);
            add(figures, Mode.ALL, all, floor, Double.NaN, 96, 128, Double.NaN);
            details.put("pure", toMap(pure));
            details.put("all", toMap(all));
            details.put("floor", toMap(floor));
            details.put("tunnels", TUNNELS);
            details.put("bytesPerLoad", sizes.footprintBytes());
            details.put("launcher", launcher.toString());
            String limits = String.format(Locale.ROOT, "pure tunnel idle %.1f MiB RSS (heap committed %s,"
                    + " non-heap committed %s per NMT; %s classes, %s of them from class-data archives) vs %.1f MiB"
                    + " for a bare JVM with Netty; all parts %.1f MiB", pure.rssIdle() / MIB,
                    nmtMib(pure.nmtIdle(), "heapCommittedKiB"), nmtMib(pure.nmtIdle(), "nonHeapCommittedKiB"),
                    pure.classesIdle().getOrDefault("classes", "n/a"), pure.classesIdle().getOrDefault("shared", "n/a"),
                    floor.rssIdle() / MIB, all.rssIdle() / MIB);
            return new ScenarioResult(Scenario.FOOTPRINT, figures, limits, details);
        }
    }

    private static void add(List<Figure> figures, Mode mode, Measured agent, Measured floor, double startTarget,
            double idleTarget, double loadedTarget, double classesTarget) {
        String p = mode.label + ": ";
        double classes = count(agent.classesIdle(), "classes");
        double floorClasses = count(floor.classesIdle(), "classes");
        if (Double.isNaN(classesTarget)) {
            figures.add(Figure.compared(p + "classes loaded idle", "classes", classes, floorClasses,
                    "bare JVM + Netty"));
        } else {
            figures.add(Figure.comparedWithTarget(p + "classes loaded idle", "classes", classes, floorClasses,
                    "bare JVM + Netty", "<= " + (int) classesTarget, classes <= classesTarget));
        }
        if (Double.isNaN(startTarget)) {
            figures.add(Figure.compared(p + "exec -> connected", "s", agent.startSeconds(), floor.startSeconds(),
                    "bare JVM + Netty"));
        } else {
            figures.add(Figure.comparedWithTarget(p + "exec -> connected", "s", agent.startSeconds(),
                    floor.startSeconds(), "bare JVM + Netty", "<= " + startTarget + " s",
                    agent.startSeconds() <= startTarget));
        }
        figures.add(Figure.comparedWithTarget(p + "RSS idle", "MiB", agent.rssIdle() / MIB, floor.rssIdle() / MIB,
                "bare JVM + Netty", "<= " + (int) idleTarget + " MiB", agent.rssIdle() / MIB <= idleTarget));
        figures.add(Figure.comparedWithTarget(p + "RSS after 1st GiB", "MiB", agent.rssFirst() / MIB,
                floor.rssFirst() / MIB, "bare JVM + Netty", "<= " + (int) loadedTarget + " MiB",
                agent.rssFirst() / MIB <= loadedTarget));
        figures.add(Figure.comparedWithTarget(p + "RSS after 2nd GiB", "MiB", agent.rssSecond() / MIB,
                floor.rssSecond() / MIB, "bare JVM + Netty", "<= " + (int) loadedTarget + " MiB",
                agent.rssSecond() / MIB <= loadedTarget));
        double growth = (agent.rssSecond() - agent.rssFirst()) / MIB;
        figures.add(Figure.comparedWithTarget(p + "RSS growth 1st -> 2nd GiB", "MiB", growth,
                (floor.rssSecond() - floor.rssFirst()) / MIB, "bare JVM + Netty", "<= 4 MiB", growth <= 4));
        figures.add(Figure.comparedWithTarget(p + "CPU per GiB, 1st (cold)", "cpu-s/GiB", agent.cpuFirst(),
                floor.cpuFirst(), "bare JVM + Netty", "<= 1.5 x warm", agent.cpuFirst() <= 1.5 * agent.cpuSecond()));
        figures.add(Figure.compared(p + "CPU per GiB, 2nd (warm)", "cpu-s/GiB", agent.cpuSecond(),
                floor.cpuSecond(), "bare JVM + Netty"));
        figures.add(Figure.compared(p + "heap committed after load (NMT)", "MiB",
                kibToMib(agent.nmtLoaded(), "heapCommittedKiB"), kibToMib(floor.nmtLoaded(), "heapCommittedKiB"),
                "bare JVM + Netty"));
        figures.add(Figure.compared(p + "non-heap committed after load (NMT)", "MiB",
                kibToMib(agent.nmtLoaded(), "nonHeapCommittedKiB"), kibToMib(floor.nmtLoaded(),
                        "nonHeapCommittedKiB"), "bare JVM + Netty"));
    }

    /** Starts one child: the agent through the launcher, or the floor. */
    @FunctionalInterface
    private interface Starter {
        Child start(boolean nmt) throws IOException;
    }

    private Measured measure(Mode mode, LoopbackTarget target, MockApi api) throws Exception {
        return measure(nmt -> startAgent(mode, api, nmt), rig.tunnel, child -> target.address());
    }

    private Measured measureFloor(List<String> jvmOptions) throws Exception {
        return measure(nmt -> startFloor(jvmOptions, nmt), rig.direct, child -> child.listening);
    }

    /**
     * One measured child (no NMT), more starts for the start-up median, then one child with NMT and the same load.
     * {@code route} and {@code target}: how the load reaches what the child serves.
     */
    private Measured measure(Starter starter, Route route, java.util.function.Function<Child, InetSocketAddress> target)
            throws Exception {
        List<Double> starts = new ArrayList<>();
        long rssIdle;
        long rssFirst;
        long rssSecond;
        long hwm;
        double cpuFirst;
        double cpuSecond;
        List<String> jvmOptions;
        Map<String, Object> classesIdle;
        Map<String, Object> classesLoaded;
        try (Child child = starter.start(false)) {
            starts.add(child.startSeconds);
            jvmOptions = child.jvmOptions();
            idle(child);
            rssIdle = child.rss();
            // After the idle RSS: attaching starts the child's attach listener thread.
            classesIdle = child.classes();
            cpuFirst = load(child, route, target.apply(child));
            rssFirst = child.rss();
            cpuSecond = load(child, route, target.apply(child));
            rssSecond = child.rss();
            hwm = child.status("VmHWM");
            classesLoaded = child.classes();
        }
        for (int i = 1; i < sizes.repeats(); i++) {
            try (Child child = starter.start(false)) {
                starts.add(child.startSeconds);
            }
        }
        Map<String, Object> nmtIdle;
        Map<String, Object> nmtLoaded;
        try (Child child = starter.start(true)) {
            idle(child);
            nmtIdle = child.nmt();
            load(child, route, target.apply(child));
            load(child, route, target.apply(child));
            nmtLoaded = child.nmt();
        }
        return new Measured(Stats.median(starts), starts, rssIdle, rssFirst, rssSecond, hwm, cpuFirst, cpuSecond,
                nmtIdle, nmtLoaded, jvmOptions, classesIdle, classesLoaded);
    }

    private void idle(Child child) {
        LockSupport.parkNanos(sizes.footprintIdle().toNanos());
        child.checkAlive();
    }

    /** {@link BenchSizes#footprintBytes()} over {@value #TUNNELS} connections, half each way; CPU-s per GiB. */
    private double load(Child child, Route route, InetSocketAddress address) throws Exception {
        long each = sizes.footprintBytes() / TUNNELS / 2;
        List<TransferClient> clients = new ArrayList<>();
        List<CompletableFuture<Channel>> connects = new ArrayList<>();
        for (int i = 0; i < TUNNELS; i++) {
            TransferClient client = new TransferClient(each, each);
            clients.add(client);
            connects.add(route.connect(address, client));
        }
        try {
            for (CompletableFuture<Channel> connect : connects) {
                connect.get(30, TimeUnit.SECONDS);
            }
            long cpuBefore = child.cpuNanos();
            clients.forEach(TransferClient::start);
            for (TransferClient client : clients) {
                try {
                    client.done().get(10, TimeUnit.MINUTES);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException(child.name + ": transfer through " + route.name() + " failed: sent "
                            + client.sent() + ", received " + client.received() + " (expected: " + each + " each way): "
                            + (e.getCause() != null ? e.getCause() : e) + "; log " + child.log, e);
                }
                if (client.sent() != each || client.received() != each) {
                    throw new IllegalStateException(child.name + ": transfer lost bytes: sent " + client.sent()
                            + ", received " + client.received() + " (expected: " + each + " each way)");
                }
            }
            long cpu = child.cpuNanos() - cpuBefore;
            return cpu / 1e9 / (2.0 * each * TUNNELS / GIB);
        } finally {
            for (CompletableFuture<Channel> connect : connects) {
                connect.thenAccept(Channel::close);
            }
            for (CompletableFuture<Channel> connect : connects) {
                if (connect.isDone() && !connect.isCompletedExceptionally()) {
                    connect.join().closeFuture().await(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    private Child startAgent(Mode mode, MockApi api, boolean nmt) throws IOException {
        AgentFiles files = rig.pki.writeAgentFiles(rig.workDir);
        List<String> command = new ArrayList<>(List.of(launcher.toString(),
                "--proxy-server-host=127.0.0.1", "--proxy-server-port=" + rig.server.agentAddress().getPort(),
                "--ca-cert=" + files.caCert(), "--agent-cert=" + files.agentCert(),
                "--agent-key=" + files.agentKey(), "--agent-id=footprint-" + mode.name().toLowerCase(Locale.ROOT),
                // Port 0, read back from the log: a port picked free here could be taken before the agent binds it
                // (the agent then exits 2, "port in use").
                "--health-server-host=127.0.0.1", "--health-server-port=0",
                "--admin-bind-address=127.0.0.1", "--admin-server-port=0",
                "--dial-allow=127.0.0.1", "--shutdown-grace=1s"));
        if (mode == Mode.ALL) {
            Path cert = rig.workDir.resolve("webhook.crt");
            Path key = rig.workDir.resolve("webhook.key");
            Pem.writeBundle(rig.pki.webhookBundle(), cert, key);
            command.addAll(List.of("--kubeconfig=" + api.kubeconfig(), "--node-name=" + MockApi.NODE,
                    "--device-source=mock", "--monitor-listen=127.0.0.1:0", "--device-plugin-host-root="
                            + api.hostRoot(), "--mock-gpus=A100-80GB,A100-80GB", "--enable-lock-controller",
                    "--pod-field-selector=false", "--webhook-tls-cert=" + cert, "--webhook-tls-key=" + key,
                    "--webhook-listen=127.0.0.1:0"));
        }
        String name = "agent (" + mode.label + (nmt ? ", NMT" : "") + ")";
        Child child = Child.start(name, command, nmt, javaOptions, rig.workDir.resolve("footprint-" + mode.name()
                .toLowerCase(Locale.ROOT) + (nmt ? "-nmt" : "") + ".log"), null);
        child.afterClose = this::awaitGone;
        try {
            BenchRig.awaitCondition("the " + name + " connects to the server (log " + child.log + ")", START_TIMEOUT,
                    () -> rig.server.agentCount() == 1 || !child.process.isAlive());
            child.checkAlive();
            child.startSeconds = (System.nanoTime() - child.startedAt) / 1e9;
            if (mode == Mode.ALL) {
                awaitReady(child);
            }
            return child;
        } catch (RuntimeException e) {
            child.close();
            throw e;
        }
    }

    private void awaitReady(Child child) {
        int[] port = new int[1];
        BenchRig.awaitCondition("the " + child.name + "'s health port in its log " + child.log, START_TIMEOUT, () -> {
            child.checkAlive();
            try (Stream<String> lines = Files.lines(child.log, StandardCharsets.UTF_8)) {
                port[0] = lines.map(ListeningLog::healthPort).filter(OptionalInt::isPresent)
                        .mapToInt(OptionalInt::getAsInt).findFirst().orElse(0);
            } catch (IOException | UncheckedIOException e) {
                return false;
            }
            return port[0] != 0;
        });
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        URI readyz = URI.create("http://127.0.0.1:" + port[0] + "/readyz");
        BenchRig.awaitCondition("every part of the " + child.name + " is ready (log " + child.log + ")",
                START_TIMEOUT, () -> {
                    child.checkAlive();
                    try {
                        return http.send(HttpRequest.newBuilder(readyz).timeout(Duration.ofSeconds(2)).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                    } catch (IOException e) {
                        return false;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                });
    }

    private Child startFloor(List<String> jvmOptions, boolean nmt) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // A class-data archive belongs to the agent's jar; the floor runs on the JDK's own archive.
        jvmOptions.stream().filter(o -> !o.startsWith("-XX:SharedArchiveFile=")).forEach(command::add);
        if (nmt) {
            command.add(NMT);
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), FootprintFloor.class.getName()));
        String name = "bare JVM + Netty" + (nmt ? " (NMT)" : "");
        Child floor = Child.start(name, command, false, "", rig.workDir.resolve("footprint-floor" + (nmt ? "-nmt" : "")
                + ".log"), FootprintFloor.READY);
        try {
            floor.checkAlive();
            return floor;
        } catch (RuntimeException e) {
            floor.close();
            throw e;
        }
    }

    private void awaitGone() {
        BenchRig.awaitCondition("the server forgets the stopped agent", START_TIMEOUT,
                () -> rig.server.agentCount() == 0);
    }

    private static Map<String, Object> toMap(Measured m) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("execToConnectedSeconds", m.startSeconds());
        map.put("execToConnectedRuns", m.startRuns());
        map.put("rssIdleBytes", m.rssIdle());
        map.put("rssAfterFirstGiBBytes", m.rssFirst());
        map.put("rssAfterSecondGiBBytes", m.rssSecond());
        map.put("rssPeakBytes", m.hwm());
        map.put("cpuSecondsPerGiBFirst", m.cpuFirst());
        map.put("cpuSecondsPerGiBSecond", m.cpuSecond());
        map.put("nmtIdle", m.nmtIdle());
        map.put("nmtAfterLoad", m.nmtLoaded());
        map.put("jvmOptions", m.jvmOptions());
        map.put("classesIdle", m.classesIdle());
        map.put("classesAfterLoad", m.classesLoaded());
        return map;
    }

    private static double count(Map<String, Object> map, String key) {
        Object value = map.get(key);
        return value instanceof Long n ? n : Double.NaN;
    }

    private static double kibToMib(Map<String, Object> nmt, String key) {
        Object value = nmt.get(key);
        return value instanceof Long kib ? kib / 1024.0 : Double.NaN;
    }

    private static String nmtMib(Map<String, Object> nmt, String key) {
        double mib = kibToMib(nmt, key);
        return Double.isNaN(mib) ? "n/a" : String.format(Locale.ROOT, "%.1f MiB", mib);
    }

    private static final Pattern NMT_TOTAL = Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB");
    private static final Pattern NMT_CATEGORY = Pattern.compile(
            "^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");

    /** Parses {@code jcmd PID VM.native_memory summary}: totals, heap, non-heap and committed KiB per category. */
    static Map<String, Object> parseNmt(String summary) {
        Map<String, Object> map = new LinkedHashMap<>();
        Map<String, Long> committed = new LinkedHashMap<>();
        long total = -1;
        long heap = -1;
        for (String raw : summary.split("\n")) {
            String line = raw.strip();
            Matcher t = NMT_TOTAL.matcher(line);
            if (t.find()) {
                total = Long.parseLong(t.group(2));
                map.put("totalReservedKiB", Long.parseLong(t.group(1)));
                map.put("totalCommittedKiB", total);
                continue;
            }
            Matcher c = NMT_CATEGORY.matcher(line);
            if (c.find()) {
                committed.put(c.group(1).strip(), Long.parseLong(c.group(3)));
                if (c.group(1).strip().equals("Java Heap")) {
                    heap = Long.parseLong(c.group(3));
                    map.put("heapReservedKiB", Long.parseLong(c.group(2)));
                }
            }
        }
        if (total < 0 || heap < 0) {
            map.put("error", "no NMT summary in: " + summary.strip().lines().limit(3).toList());
            return map;
        }
        map.put("heapCommittedKiB", heap);
        map.put("nonHeapCommittedKiB", total - heap);
        map.put("committedKiBByCategory", committed);
        return map;
    }

    private static final Pattern METASPACE_TOTAL = Pattern.compile(
            "Total Usage - (\\d+) loaders?, (\\d+) classes?(?: \\((\\d+) shared\\))?:");

    /**
     * Parses the total line of {@code jcmd PID VM.metaspace}: the classes loaded now (loaded and not unloaded, hidden
     * classes and lambdas included), how many of them came from class-data archives, and the class loaders. JDK 17
     * leaves the "(N shared)" out when the JVM maps no archive (none beside the jar, or one made for another jar,
     * which the launcher's -XX:SharedArchiveFile then ignores): 0 from archives, so a stale archive shows.
     */
    static Map<String, Object> parseMetaspace(String out) {
        Map<String, Object> map = new LinkedHashMap<>();
        Matcher m = METASPACE_TOTAL.matcher(out);
        if (!m.find()) {
            map.put("error", "no class count in: " + out.strip().lines().limit(3).toList());
            return map;
        }
        map.put("classes", Long.parseLong(m.group(2)));
        map.put("shared", m.group(3) == null ? 0L : Long.parseLong(m.group(3)));
        map.put("loaders", Long.parseLong(m.group(1)));
        return map;
    }

    /** A child JVM (the agent through the launcher, or the floor), measured from outside through procfs. */
    private static final class Child implements AutoCloseable {
        final String name;
        final Process process;
        final Path log;
        final long startedAt;
        double startSeconds;
        InetSocketAddress listening;
        Runnable afterClose = () -> { };

        private Child(String name, Process process, Path log, long startedAt) {
            this.name = name;
            this.process = process;
            this.log = log;
            this.startedAt = startedAt;
        }

        static Child start(String name, List<String> command, boolean nmtThroughLauncher, String extraOptions,
                Path log, String ready) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            // Exactly the image's options: the launcher's defaults, nothing inherited from this process.
            builder.environment().remove("TENANT_GATEWAY_JVM_OPTS");
            builder.environment().remove("JAVA_OPTS");
            builder.environment().remove("JAVA_TOOL_OPTIONS");
            builder.environment().remove("MALLOC_ARENA_MAX");
            // Tuning experiments only: options added after the image's (bench's hidden --footprint-java-opts).
            String javaOpts = ((nmtThroughLauncher ? NMT : "") + " " + extraOptions).strip();
            if (!javaOpts.isEmpty()) {
                builder.environment().put("JAVA_OPTS", javaOpts);
            }
            if (ready == null) {
                builder.redirectOutput(log.toFile());
            }
            long startedAt = System.nanoTime();
            Process process = builder.start();
            Child child = new Child(name, process, log, startedAt);
            if (ready != null) {
                child.readPort(ready);
            }
            return child;
        }

        private void readPort(String ready) throws IOException {
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(ready)) {
                    startSeconds = (System.nanoTime() - startedAt) / 1e9;
                    listening = new InetSocketAddress("127.0.0.1", Integer.parseInt(line.substring(ready.length())
                            .strip()));
                    Thread drain = new Thread(() -> {
                        try {
                            out.transferTo(java.io.Writer.nullWriter());
                        } catch (IOException e) {
                            // the child is gone
                        }
                    }, "bench-footprint-floor-output");
                    drain.setDaemon(true);
                    drain.start();
                    return;
                }
            }
            throw new IllegalStateException(name + " exited " + waitExit() + " before listening");
        }

        void checkAlive() {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited " + process.exitValue() + " (log " + log + ")");
            }
        }

        /** The JVM options the launcher gave: the child's command line up to {@code -jar}. */
        List<String> jvmOptions() throws IOException {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
            List<String> options = new ArrayList<>();
            for (String arg : new String(raw, StandardCharsets.UTF_8).split("\0")) {
                if (arg.equals("-jar") || arg.equals("-cp")) {
                    break;
                }
                if (arg.startsWith("-")) {
                    options.add(arg);
                }
            }
            options.remove(NMT);
            return options;
        }

        long rss() {
            return status("VmRSS");
        }

        /** A {@code kB} field of {@code /proc/PID/status}, in bytes. */
        long status(String field) {
            checkAlive();
            try {
                for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
                    if (line.startsWith(field + ":")) {
                        return Long.parseLong(line.substring(field.length() + 1).strip().split("\\s+")[0]) * 1024;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read /proc/" + process.pid() + "/status of " + name, e);
            }
            throw new IllegalStateException("no " + field + " in /proc/" + process.pid() + "/status");
        }

        /** utime + stime of the child (all its threads), in nanoseconds. */
        long cpuNanos() {
            checkAlive();
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                // after "pid (comm) ": state is field 3, utime 14, stime 15 (1-based) → index 11 and 12 here
                long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                return ticks * (1_000_000_000L / USER_HZ);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read /proc/" + process.pid() + "/stat of " + name, e);
            }
        }

        Map<String, Object> nmt() throws IOException, InterruptedException {
            String out = jcmd("VM.native_memory", "summary");
            return out == null ? Map.of("error", "no jcmd in " + System.getProperty("java.home") + " (a JRE): NMT"
                    + " not read") : parseNmt(out);
        }

        /** The classes loaded now ({@code jcmd PID VM.metaspace}: works without perf data, which the agent has off). */
        Map<String, Object> classes() throws IOException, InterruptedException {
            String out = jcmd("VM.metaspace");
            return out == null ? Map.of("error", "no jcmd in " + System.getProperty("java.home") + " (a JRE): classes"
                    + " not counted") : parseMetaspace(out);
        }

        /** What {@code jcmd PID COMMAND...} printed; null without a jcmd next to this JVM. */
        private String jcmd(String... command) throws IOException, InterruptedException {
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            if (!Files.isExecutable(jcmd)) {
                return null;
            }
            List<String> line = new ArrayList<>(List.of(jcmd.toString(), Long.toString(process.pid())));
            line.addAll(List.of(command));
            Process p = new ProcessBuilder(line).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            return out;
        }

        private String waitExit() {
            try {
                return process.waitFor(10, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "(still running)";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "(interrupted)";
            }
        }

        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            afterClose.run();
        }
    }

    /**
     * A CRUD mock API server on loopback with the node, {@link #GPU_CONTAINERS} GPU pods on it whose HAMi-core regions
     * exist under {@code hostRoot} (what the vGPU monitor reads on a busy node), and a kubeconfig for it.
     */
    private record MockApi(KubernetesMockServer server, KubernetesClient client, Path kubeconfig, Path hostRoot)
            implements AutoCloseable {
        static final String NODE = "footprint-node";
        /** GPU containers on the node: the monitor reads each one's region every scan. */
        static final int GPU_CONTAINERS = 100;

        static MockApi start(Path dir) throws IOException {
            KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(),
                    new HashMap<>(), new KubernetesCrudDispatcher(), false);
            server.init(InetAddress.getLoopbackAddress(), 0);
            String url = "http://127.0.0.1:" + server.getPort() + "/";
            KubernetesClient client = server.createClient(b -> b.editOrNewConfig().withMasterUrl(url).endConfig());
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
            Path hostRoot = dir.resolve("footprint-host");
            for (int i = 0; i < GPU_CONTAINERS; i++) {
                String uuid = String.format(Locale.ROOT, "GPU-%08d-0000-0000-0000-000000000000", i % 2);
                var pod = client.pods().inNamespace("team-a").resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withNewMetadata().withName("gpu-" + i).withNamespace("team-a").addToAnnotations(
                                io.tenantgateway.hami.Annotations.POD_DEVICES_ALLOCATED, uuid + ",NVIDIA,800,1:;")
                        .endMetadata().withNewSpec().withNodeName(NODE).addNewContainer().withName("cuda")
                        .withImage("cuda").endContainer().endSpec().build()).create();
                io.tenantgateway.hami.region.SimulatedRegion.write(hostRoot.resolve("usr/local/vgpu/containers/"
                        + pod.getMetadata().getUid() + "_cuda/" + i + ".cache"), 1000 + i, List.of(
                                new io.tenantgateway.hami.region.SimulatedRegion.Device(uuid, 800L << 20, 1,
                                        (100L + i) << 20, i % 100)), System.currentTimeMillis() / 1000);
            }
            Path kubeconfig = io.tenantgateway.tools.kube.Kubeconfigs.write(dir.resolve("footprint-kubeconfig"), "mock",
                    url, "default", "agent");
            return new MockApi(server, client, kubeconfig, hostRoot);
        }

        @Override
        public void close() {
            client.close();
            server.destroy();
        }
    }

    /** Where the launcher is: {@code bin/proxy-agent} of the checkout or image this tools jar belongs to. */
    static Path defaultLauncher() {
        try {
            Path jar = Path.of(FootprintScenario.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path dir = Files.isDirectory(jar) ? jar : jar.getParent();
            for (Path candidate : List.of(dir.resolve("../bin/proxy-agent"), dir.resolve("../../bin/proxy-agent"),
                    dir.resolve("../../../bin/proxy-agent"))) {
                if (Files.isExecutable(candidate)) {
                    return candidate.normalize();
                }
            }
            return dir.resolve("../../bin/proxy-agent").normalize();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot tell where the tools jar is: " + e.getMessage(), e);
        }
    }
}
