package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.DownloadTarget;
import io.tenantgateway.agent.testing.DownloadTarget.Download;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.tunnel.server.ServerSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #14, lossless drain: SIGTERM to the agent (the built jar, as a child process) while 100 downloads of 8 MiB
 * run through it (client → server → agent → target; the target streams and closes). Every download must arrive
 * complete and intact, the agent must log "drained" and exit 0. Ten repetitions, a fresh agent each.
 *
 * <p>The server runs in upstream mode by default (no flow-control extension, like the Go konnectivity-server);
 * {@code -Dtenantgateway.it.flowControl=true} runs the same test with the extension.
 */
@Timeout(900)
class LosslessDrainIT {
    private static final int DOWNLOADS = 100;
    private static final long SIZE = 8L * 1024 * 1024;
    private static final int REPETITIONS = Integer.getInteger("tenantgateway.it.repetitions", 10);
    private static final Duration SIGTERM_AFTER = Duration.ofSeconds(1);

    @TempDir
    Path dir;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        timer.shutdownNow();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void sigtermDuringDownloadsCutsNone() throws Exception {
        boolean flowControl = Boolean.getBoolean("tenantgateway.it.flowControl");
        TunnelTestbed testbed = track(new TunnelTestbed(dir, flowControl));
        DownloadTarget target = track(new DownloadTarget(SIZE, 1));
        List<String> expected = new ArrayList<>();
        for (int seed = 1; seed <= DOWNLOADS; seed++) {
            expected.add(DownloadTarget.sha256(seed, SIZE));
        }

        SoftAssertions softly = new SoftAssertions();
        int complete = 0;
        long started = System.nanoTime();
        for (int repetition = 1; repetition <= REPETITIONS; repetition++) {
            String agentId = "drain-" + repetition;
            List<String> args = new ArrayList<>(testbed.kamajiArgs());
            args.add(TunnelTestbed.DIAL_LOOPBACK); // downloads from a loopback target
            args.add("--agent-id=" + agentId);
            // The drain's deadline: generous, because it must not cut a download that a busy machine is slow to
            // finish (what the test checks is that none is cut, not how fast 800 MiB crosses the tunnel).
            args.add("--shutdown-grace=5m");
            try (AgentProcess agent = AgentProcess.start(args)) {
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(testbed.server.snapshot()
                        .agents()).extracting(ServerSnapshot.Agent::agentId).containsExactly(agentId));

                long repetitionStart = System.nanoTime();
                List<CompletableFuture<Download.Result>> downloads = new ArrayList<>();
                for (int seed = 1; seed <= DOWNLOADS; seed++) {
                    Download download = new Download(seed);
                    downloads.add(testbed.dial(target.hostPort(), download).thenCompose(ch -> download.done()));
                }
                ScheduledFuture<?> sigterm = timer.schedule(() -> {
                    agent.signal("TERM");
                    return null;
                }, SIGTERM_AFTER.toMillis(), TimeUnit.MILLISECONDS);

                int ok = 0;
                List<String> failures = new ArrayList<>();
                for (CompletableFuture<Download.Result> download : downloads) {
                    try {
                        Download.Result result = download.get(120, TimeUnit.SECONDS);
                        if (result.bytes() == SIZE && result.sha256().equals(expected.get((int) result.seed() - 1))) {
                            ok++;
                        } else {
                            failures.add("seed " + result.seed() + ": " + result.bytes() + " bytes");
                        }
                    } catch (Exception e) {
                        failures.add(e.toString());
                    }
                }
                sigterm.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                int exit = agent.awaitExit(Duration.ofSeconds(90));
                double seconds = (System.nanoTime() - repetitionStart) / 1e9;
                System.out.printf("LosslessDrainIT flowControl=%s repetition=%d complete=%d/%d seconds=%.1f"
                        + " exit=%d%n", flowControl, repetition, ok, DOWNLOADS, seconds, exit);
                complete += ok;
                agent.log.stream().filter(line -> !line.contains("config=") && (line.contains("drain")
                        || line.contains("grace") || line.contains("closed") || line.contains("half-clos")
                        || line.contains("SIGTERM")))
                        .forEach(line -> System.out.println("  agent: " + line));
                String log = String.join("\n", agent.log);
                softly.assertThat(failures).as("repetition %d: failed downloads; agent log:%n%s", repetition, log)
                        .isEmpty();
                softly.assertThat(agent.lines("drained")).as("repetition %d: agent logged drained; log:%n%s",
                        repetition, log).isNotEmpty();
                softly.assertThat(exit).as("repetition %d: exit code", repetition).isZero();
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                ServerSnapshot snapshot = testbed.server.snapshot();
                assertThat(snapshot.agents()).isEmpty();
                assertThat(snapshot.tunnels()).isEmpty();
            });
        }
        System.out.printf("LosslessDrainIT flowControl=%s complete=%d/%d seconds=%.1f%n", flowControl, complete,
                DOWNLOADS * REPETITIONS, (System.nanoTime() - started) / 1e9);
        softly.assertThat(complete).as("downloads complete").isEqualTo(DOWNLOADS * REPETITIONS);
        softly.assertAll();
    }

    private <T extends AutoCloseable> T track(T closeable) {
        closeables.add(closeable);
        return closeable;
    }
}
