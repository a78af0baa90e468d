package io.tenantgateway.tools.lab;

import io.tenantgateway.agent.cli.Durations;
import io.tenantgateway.agent.cli.ExitCodes;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tenant-gateway lab}: the two-tenant Kamaji + HAMi lab, embedded; see {@link Lab}. */
@Command(name = "lab", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the two-tenant Kamaji + HAMi lab in this JVM (no cluster, Docker or GPU needed).",
            "Per tenant an API server (fabric8 mock, CRUD), a konnectivity-server and worker agents with mock devices"
                + " (tenant-a: 1 x A100 80 GB, token auth; tenant-b: 2 x L4 24 GB, and a second worker with 1 x L4,"
                + " 2 x Ascend 910B4 and 1 x Hygon DCU K100, mTLS); admission through the tunnels; a HAMi scheduler"
                + " SIMULATOR; a HAMi-core stand-in writing simulated GPU containers' usage. Prints the eleven"
                + " checks and the registered devices as a table (or JSON). Exit code 0 only when all pass."})
public final class LabCommand implements Callable<Integer> {
    private static final String LOG_FILE = "lab.log";

    @Spec
    CommandSpec spec;

    @Option(names = "--json", description = "Print the result as JSON (progress still goes to stderr). Default: a"
            + " table.")
    boolean json;

    @Option(names = "--keep-running",
            description = "After the checks, keep everything up and print where it listens, until Ctrl-C. Default:"
                    + " stop after the checks.")
    boolean keepRunning;

    @Option(names = "--timeout", defaultValue = "20s", paramLabel = "DURATION",
            description = "Longest wait for state to change (readiness, allocation, lock release, reconnect);"
                    + " network calls use the webhook timeout, 10s. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(names = "--work-dir", paramLabel = "DIR",
            description = "Where certificates, tokens, kubeconfigs, sockets and lab.log go. Default: a new"
                    + " temporary directory, removed afterwards (lab.log is kept when a check fails).")
    Path workDir;

    @Option(names = {"-v", "--v"}, defaultValue = "0", paramLabel = "N",
            description = "Log verbosity (klog -v) of lab.log. Default: ${DEFAULT-VALUE}.")
    int verbosity;

    @Option(names = "--break", split = ",", hidden = true, paramLabel = "PART",
            description = "Break a part on purpose to see its check fail: agent-token, device-registration, webhook,"
                    + " gpu-sharing, device-plugin, shared-api-server, dial-policy, server-b-auth, server-address,"
                    + " kubelet-dir, ascend-webhook, monitor.")
    List<String> breaks = new ArrayList<>();

    @Option(names = "--checks", split = ",", hidden = true, paramLabel = "N",
            description = "Run only these checks (1-" + LabOptions.CHECK_COUNT + "); the whole lab is set up anyway.")
    List<Integer> checks = new ArrayList<>();

    @Override
    public Integer call() throws InterruptedException {
        Set<Breakage> breakages = new HashSet<>();
        breaks.forEach(value -> breakages.add(Breakage.parse(value)));
        LabOptions options = new LabOptions(checks.isEmpty() ? LabOptions.allChecks() : new HashSet<>(checks),
                breakages, Durations.parse("--timeout", timeout), Optional.empty());
        boolean ownDir = workDir == null;
        Path dir;
        try {
            dir = ownDir ? Files.createTempDirectory("tenant-gateway-lab-") : Files.createDirectories(workDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the lab's work directory", e);
        }
        Path logFile = dir.resolve(LOG_FILE);
        LabLogging.toFile(logFile, verbosity);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        LabReport report = null;
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch cleanedUp = new CountDownLatch(1);
        Lab lab = new Lab(new LabOptions(options.checks(), options.breakages(), options.timeout(), Optional.of(dir)),
                Clock.systemUTC(), line -> {
                    err.println("lab: " + line);
                    err.flush();
                });
        try {
            err.println("lab: logs go to " + logFile);
            report = lab.run();
            out.print(json ? LabReportFormat.json(report) : LabReportFormat.table(report));
            out.flush();
            if (keepRunning) {
                runUntilInterrupted(lab, report, json ? err : out, stop, cleanedUp);
            }
        } finally {
            lab.close();
            if (ownDir) {
                boolean keepLog = report == null || !report.passed();
                Lab.deleteTree(dir, path -> keepLog && path.equals(logFile));
                if (keepLog) {
                    err.println("lab: logs kept in " + logFile);
                }
            }
            err.flush();
            cleanedUp.countDown();
        }
        return report.passed() ? ExitCodes.OK : ExitCodes.FAILED;
    }

    /**
     * Blocks until the JVM is asked to exit (Ctrl-C, SIGTERM); the shutdown hook then waits until {@code cleanedUp}
     * (the lab closed, its files removed).
     */
    private static void runUntilInterrupted(Lab lab, LabReport report, PrintWriter out, CountDownLatch stop,
            CountDownLatch cleanedUp) throws InterruptedException {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            try {
                cleanedUp.await(15, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "lab-shutdown"));
        out.println();
        out.println("The lab keeps running; Ctrl-C stops it.");
        out.print(LabReportFormat.endpoints(report));
        out.flush();
        // The mock API servers keep every request they answer; drop them now and then.
        while (!stop.await(30, TimeUnit.SECONDS)) {
            lab.forgetRecordedRequests();
        }
    }
}
