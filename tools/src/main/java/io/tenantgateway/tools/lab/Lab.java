package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoopGroup;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.PartViews;
import io.tenantgateway.agent.health.HealthCheck;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two-tenant Kamaji + HAMi lab in one JVM: per tenant a CA, an API server (fabric8's mock server, CRUD), a
 * konnectivity-server and its worker agents started with {@code tenant-gateway run}'s flags (tenant-b has a second
 * worker with simulated Hygon and Ascend devices); kube-apiserver's admission calls through the tunnel; a HAMi
 * scheduler simulator; a kubelet stand-in per worker (its device plugins register there, Allocate is called per
 * container as kubelet does); and the checks of the reference lab plus the kubelet path and the other vendors.
 *
 * <pre>{@code
 * try (Lab lab = new Lab(LabOptions.defaults(), Clock.systemUTC(), System.err::println)) {
 *     LabReport report = lab.run();   // everything stays up until close()
 * }
 * }</pre>
 *
 * <p>Everything listens on 127.0.0.1 with ports picked by the OS. Not thread-safe: one thread runs and closes it.
 */
public final class Lab implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Lab.class);

    /**
     * worker-a: one A100, Kamaji-style: Kamaji's konnectivity-agent (our image: tunnel and webhook,
     * {@code --enable-lock-controller=false}) and the chart's node role ({@code --tunnel=false}: devices, device
     * plugin, lock controller, vGPU monitor) side by side.
     */
    static final LabTenant.Spec TENANT_A = new LabTenant.Spec("tenant-a", "team-a", LabTenant.AgentAuth.TOKEN,
            List.of(new LabTenant.WorkerSpec("worker-a", "A100-80GB", 1, "", true, true)), false);
    /**
     * worker-b: two L4s, serving the webhook (with HAMi's Ascend backends on); worker-b2: one L4 and simulated Hygon
     * and Ascend devices, no webhook.
     */
    static final LabTenant.Spec TENANT_B = new LabTenant.Spec("tenant-b", "team-b", LabTenant.AgentAuth.MTLS,
            List.of(new LabTenant.WorkerSpec("worker-b", "L4-24GB:2", 2, "", true),
                    new LabTenant.WorkerSpec("worker-b2", "L4-24GB:1", 1, "Ascend910B4:2,DCU-K100:1", false)), true);

    /**
     * How long one network exchange may take — a dial through a tunnel, a TLS handshake, an AdmissionReview, a
     * credential probe: kube-apiserver's webhook timeout ({@code timeoutSeconds: 10} in HAMi's configuration).
     * Waits for state (readiness, allocation, reconnects) use {@link LabOptions#timeout()}.
     */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    /** How the output labels the scheduler: the lab does not run HAMi's. */
    public static final String SCHEDULER = "HAMi scheduler: SIMULATOR (HAMi's Filter/Bind API writes, first-fit"
            + " placement by memory and cores)";

    private final LabOptions options;
    private final Clock clock;
    private final Consumer<String> progress;
    private Path workDir;
    private boolean ownsWorkDir;
    private EventLoopGroup group;
    private Waiter waiter;
    private LabTenant a;
    private LabTenant b;
    private boolean ran;
    private boolean closed;

    /** @param progress receives one line per step while the lab runs */
    public Lab(LabOptions options, Clock clock, Consumer<String> progress) {
        this.options = requireNonNull(options, "options");
        this.clock = requireNonNull(clock, "clock");
        this.progress = requireNonNull(progress, "progress");
    }

    /** Sets the lab up, runs the selected checks and returns; everything keeps running until {@link #close()}. */
    public LabReport run() throws InterruptedException {
        if (ran || closed) {
            throw new IllegalStateException("a lab runs once");
        }
        ran = true;
        long start = System.nanoTime();
        setUp();
        LabChecks checks = new LabChecks(a, b, options.timeout(), waiter, group, clock);
        List<CheckResult> results = new ArrayList<>();
        for (int number : options.checks()) {
            results.add(runCheck(checks, number));
        }
        return new LabReport(results, Duration.ofNanos(System.nanoTime() - start), List.of(endpoints(a),
                endpoints(b)), options.breakages(), LabChecks.devices(List.of(a, b)));
    }

    private void setUp() throws InterruptedException {
        try {
            ownsWorkDir = options.workDir().isEmpty();
            workDir = ownsWorkDir ? Files.createTempDirectory("tenant-gateway-lab-")
                    : Files.createDirectories(options.workDir().get());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the lab's work directory", e);
        }
        progress.accept("work dir " + workDir);
        for (Breakage breakage : options.breakages()) {
            progress.accept("BROKEN ON PURPOSE: " + breakage.description() + " (check " + breakage.check()
                    + " must fail)");
        }
        progress.accept(SCHEDULER);
        group = Transports.newGroup(2, "lab");
        waiter = new Waiter();

        a = new LabTenant(TENANT_A, true, workDir.resolve(TENANT_A.name()), options, clock, group);
        a.startControlPlane(null);
        describeControlPlane(a);
        b = new LabTenant(TENANT_B, false, workDir.resolve(TENANT_B.name()), options, clock, group);
        b.startControlPlane(options.broken(Breakage.SHARED_API_SERVER) ? a.apiServer() : null);
        describeControlPlane(b);
        startAgents();
        for (LabTenant.Worker worker : workers()) {
            Agent agent = worker.agent();
            LabTenant.WorkerSpec spec = worker.spec;
            progress.accept(worker.tenant().spec.name() + ": " + worker.tunnelAgentLabel() + " started with"
                    + " tenant-gateway run's wiring: tunnel"
                    + (worker.tenant().workers().size() > 1 && worker == worker.tenant().workers().get(0)
                            ? " (default route)" : "")
                    + PartViews.webhook(agent).map(w -> ", webhook 127.0.0.1:" + w.port()
                            + (worker.tenant().ascendWebhook() ? " (--enable-ascend)" : "")).orElse("")
                    + (worker.split() ? " (Kamaji's konnectivity-agent, --enable-lock-controller=false)"
                            : parts(worker, agent)));
            if (worker.split()) {
                progress.accept(worker.tenant().spec.name() + ": " + worker.nodeAgentLabel() + " started with"
                        + " tenant-gateway run --tunnel=false (the node role, --agent-id=" + worker.nodeAgentId()
                        + "): no tunnel" + parts(worker, worker.nodeAgent()));
            }
        }
        long waitStart = System.nanoTime();
        progress.accept("waiting for every agent's /readyz (at most " + seconds(options.timeout()) + ") …");
        for (LabTenant.Worker worker : workers()) {
            for (Agent agent : worker.agents()) {
                // One deadline for all: a broken agent costs one timeout, and the checks report why it is not ready.
                Duration left = options.timeout().minusNanos(System.nanoTime() - waitStart);
                boolean ready = waiter.until(left.isNegative() ? Duration.ZERO : left, () -> ready(agent));
                progress.accept(worker.tenant().spec.name() + ": " + (agent == worker.agent()
                        ? worker.tunnelAgentLabel() : worker.nodeAgentLabel()) + " "
                        + (ready ? "ready" : LabChecks.notReady(agent)) + " after "
                        + seconds(Duration.ofNanos(System.nanoTime() - waitStart)));
            }
        }
    }

    /** The device parts {@code agent} of {@code worker} runs, as the start lines list them. */
    private static String parts(LabTenant.Worker worker, Agent agent) {
        LabTenant.WorkerSpec spec = worker.spec;
        return PartViews.devices(agent).map(d -> (spec.mockGpus().isEmpty() ? "" : ", mock GPUs " + spec.mockGpus())
                        + (spec.mockDevices().isEmpty() ? "" : ", mock devices " + spec.mockDevices())).orElse("")
                + PartViews.devicePlugin(agent).map(p -> ", device plugin " + p.config().socket()
                        + spec.vendorDevices().keySet().stream().map(v -> v.vendor().socketName()).distinct()
                                .map(socket -> " + " + socket).collect(Collectors.joining())
                        + " (kubelet stand-in " + worker.kubelet().socket() + ")").orElse("")
                + PartViews.allocation(agent).map(l -> ", lock controller").orElse("")
                + agent.part(io.tenantgateway.agent.monitor.MonitorPart.NAME).map(m -> ", vGPU monitor").orElse("");
    }

    private List<LabTenant.Worker> workers() {
        return Stream.of(a, b).flatMap(tenant -> tenant.workers().stream()).toList();
    }

    /** Every worker starts at once, as DaemonSet pods would; each start blocks on its own informers. */
    private void startAgents() throws InterruptedException {
        List<LabTenant.Worker> workers = workers();
        ExecutorService starter = Executors.newFixedThreadPool(2 * workers.size(), runnable -> {
            Thread thread = new Thread(runnable, "lab-agent-start");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<?>> starts = workers.stream().<Future<?>>flatMap(w -> Stream.of(starter.submit(w::startAgent),
                    starter.submit(w::startNodeAgent))).toList();
            RuntimeException failure = null;
            for (Future<?> start : starts) { // wait for both, so close() never races a start
                try {
                    start.get();
                } catch (ExecutionException e) {
                    RuntimeException cause = e.getCause() instanceof RuntimeException runtime ? runtime
                            : new IllegalStateException("agent start failed", e.getCause());
                    if (failure == null) {
                        failure = cause;
                    } else {
                        failure.addSuppressed(cause);
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        } finally {
            starter.shutdown();
        }
    }

    private void describeControlPlane(LabTenant tenant) {
        progress.accept(tenant.spec.name() + ": CA " + tenant.spec.name() + "-ca, API server " + tenant.apiUrl()
                + ", konnectivity-server " + tenant.spec.serverId() + " on "
                + LabTenant.hostPort(tenant.server().agentAddress()) + " (" + tenant.spec.auth().label
                + ", ProxyService " + tenant.frontend() + "), webhook Service " + AdmissionCaller.WEBHOOK_DNS_NAME
                + " = " + LabTenant.hostPort(tenant.webhookService().address()));
    }

    private static boolean ready(Agent agent) {
        return agent.readiness().values().stream().allMatch(HealthCheck.Result::ok);
    }

    private CheckResult runCheck(LabChecks checks, int number) throws InterruptedException {
        String title = LabChecks.TITLES.get(number - 1);
        progress.accept("[" + number + "/" + LabOptions.CHECK_COUNT + "] " + title + " …");
        long start = System.nanoTime();
        boolean passed;
        String evidence;
        try {
            evidence = checks.run(number);
            passed = true;
        } catch (CheckFailed e) {
            evidence = e.getMessage();
            passed = false;
        } catch (RuntimeException e) {
            log.warn("lab check {} ({}) failed with an unexpected error", number, title, e);
            evidence = "unexpected error: " + e;
            passed = false;
        }
        CheckResult result = new CheckResult(number, title, passed, Duration.ofNanos(System.nanoTime() - start),
                evidence);
        progress.accept("[" + number + "/" + LabOptions.CHECK_COUNT + "] " + (passed ? "PASS" : "FAIL") + " in "
                + millis(result.duration()) + (passed ? "" : ": " + evidence));
        return result;
    }

    private static LabReport.Endpoints endpoints(LabTenant tenant) {
        List<LabReport.AgentEndpoints> agents = new ArrayList<>();
        for (LabTenant.Worker worker : tenant.workers()) {
            agents.add(agentEndpoints(worker, worker.agent(), worker.split() ? "tunnel + webhook" : "",
                    worker.agentArgs()));
            if (worker.split()) {
                agents.add(agentEndpoints(worker, worker.nodeAgent(), "node role, --tunnel=false",
                        worker.nodeAgentArgs()));
            }
        }
        return new LabReport.Endpoints(tenant.spec.name(), tenant.apiUrl(), tenant.kubeconfig().toString(),
                LabTenant.hostPort(tenant.server().agentAddress()), tenant.spec.auth().label, tenant.frontend(),
                AdmissionCaller.WEBHOOK_DNS_NAME + " = " + LabTenant.hostPort(tenant.webhookService().address()),
                agents);
    }

    private static LabReport.AgentEndpoints agentEndpoints(LabTenant.Worker worker, Agent agent, String role,
            List<String> args) {
        String admin = agent.admin().map(s -> "http://127.0.0.1:" + s.boundPort()).orElse("");
        String health = agent.health().map(s -> "http://127.0.0.1:" + s.boundPort()).orElse("");
        return new LabReport.AgentEndpoints(worker.node(), admin.isEmpty() ? "" : admin + "/ui",
                health.isEmpty() ? "" : health + "/metrics", health.isEmpty() ? "" : health + "/readyz?verbose",
                "bin/tenant-gateway doctor " + String.join(" ", args), role);
    }

    /** Drops what the mock API servers recorded, for a lab that keeps running. */
    public void forgetRecordedRequests() throws InterruptedException {
        if (a != null) {
            a.forgetRecordedRequests();
        }
        if (b != null && b.apiServer() != a.apiServer()) {
            b.forgetRecordedRequests();
        }
    }

    public Path workDir() {
        return workDir;
    }

    /** Stops every part (agents first); deletes the work directory when the lab created it. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (b != null) {
            b.close();
        }
        if (a != null) {
            a.close();
        }
        if (waiter != null) {
            waiter.close();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (ownsWorkDir && workDir != null) {
            deleteTree(workDir, path -> false);
        }
    }

    /** Deletes {@code dir} and what is below it, except the files {@code keep} accepts (and their directories). */
    public static void deleteTree(Path dir, Predicate<Path> keep) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                if (keep.test(path)) {
                    continue;
                }
                if (Files.isDirectory(path)) {
                    try (Stream<Path> left = Files.list(path)) {
                        if (left.findAny().isPresent()) {
                            continue; // holds a kept file
                        }
                    }
                }
                Files.delete(path);
            }
        } catch (IOException e) {
            log.warn("lab: cannot delete {}: {}", dir, e.toString());
        }
    }

    /** {@code 12 ms} below a second, {@code 1.2 s} above. */
    static String millis(Duration duration) {
        long ms = duration.toMillis();
        return ms < 1000 ? ms + " ms" : seconds(duration);
    }

    static String seconds(Duration duration) {
        return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
    }
}
