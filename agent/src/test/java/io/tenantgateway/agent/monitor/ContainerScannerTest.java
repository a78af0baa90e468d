package io.tenantgateway.agent.monitor;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.monitor.policy.CleanupPolicy;
import io.tenantgateway.hami.region.SimulatedRegion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One scan over directories made on disk: what is trusted, what falls back, what is skipped, what goes. */
class ContainerScannerTest {
    private static final String UID_A = "aaaaaaaa-0000-0000-0000-000000000001";
    private static final String UID_B = "bbbbbbbb-0000-0000-0000-000000000002";
    private static final Instant NOW = Instant.parse("2026-12-07T12:00:00Z");

    @TempDir
    Path root;

    private static PodInfo pod(String uid, String name, boolean terminal, String allocated, String... containers) {
        return new PodInfo(uid, "team-a", name, List.of("init"), List.of(containers), terminal,
                Optional.ofNullable(allocated));
    }

    @Test
    void aRegionThatIsNotHamiCoresIsSkippedCountedAndTheAnnotationStandsIn() throws Exception {
        Path dir = Files.createDirectories(root.resolve(UID_A + "_cuda"));
        Files.write(dir.resolve("x.cache"), new byte[2008952]); // the right size, no magic
        ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ofMinutes(5)), 1024);

        // The init container's entry comes first: cuda's is the second.
        MonitorSnapshot snapshot = scanner.scan(List.of(pod(UID_A, "a", false, ";GPU-1,NVIDIA,2048,50:;", "cuda")),
                Optional.empty(), NOW);

        assertThat(snapshot.containers()).singleElement().satisfies(container -> {
            assertThat(container.source()).isEqualTo(ContainerUsage.Source.ANNOTATION);
            assertThat(container.container()).isEqualTo("cuda");
            assertThat(container.devices()).singleElement().satisfies(device -> {
                assertThat(device.uuid()).isEqualTo("GPU-1");
                assertThat(device.limitBytes()).isEqualTo(2048L << 20);
                assertThat(device.smLimitPercent()).isEqualTo(50);
                assertThat(device.usedBytes()).isZero();
            });
        });
        assertThat(scanner.skipped()).containsEntry("wrong_magic", 1L).containsEntry("truncated", 0L);
        assertThat(scanner.scans()).isEqualTo(1);
    }

    @Test
    void initContainersLinksAndNamesOfNoPodAreNotRead() throws Exception {
        SimulatedRegion.write(root.resolve(UID_A + "_init/r.cache"), 1, List.of(
                new SimulatedRegion.Device("GPU-1", 100, 0, 10, 1)), 0);
        Path elsewhere = Files.createDirectories(root.getParent().resolve(root.getFileName() + "-elsewhere"));
        SimulatedRegion.write(elsewhere.resolve("r.cache"), 1, List.of(
                new SimulatedRegion.Device("GPU-1", 100, 0, 10, 1)), 0);
        Files.createSymbolicLink(root.resolve(UID_A + "_cuda"), elsewhere);
        Files.createDirectories(root.resolve("lost+found"));
        ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ZERO), 1024);

        MonitorSnapshot snapshot = scanner.scan(List.of(pod(UID_A, "a", false, null, "cuda")), Optional.empty(),
                NOW);

        assertThat(snapshot.containers()).isEmpty();
        assertThat(snapshot.directories()).as("the link is no directory of ours").isEqualTo(2);
        assertThat(root.resolve("lost+found")).isDirectory();
        assertThat(elsewhere.resolve("r.cache")).isRegularFile();
    }

    @Test
    void aFinishedPodsContainerIsNotExportedAndItsDirectoryGoesAfterTheGrace() throws Exception {
        Path done = root.resolve(UID_B + "_cuda");
        SimulatedRegion.write(done.resolve("r.cache"), 1, List.of(new SimulatedRegion.Device("GPU-2", 100, 0, 10, 1)),
                0);
        ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ofSeconds(30)), 1024);
        List<PodInfo> pods = List.of(pod(UID_B, "b", true, "GPU-2,NVIDIA,1,0:;", "cuda"));

        assertThat(scanner.scan(pods, Optional.empty(), NOW).containers()).isEmpty();
        assertThat(done).isDirectory();
        MonitorSnapshot later = scanner.scan(pods, Optional.empty(), NOW.plusSeconds(30));
        assertThat(done).doesNotExist();
        assertThat(later.waitingForCleanup()).isEmpty();
        assertThat(scanner.removed()).isEqualTo(1);
    }

    @Test
    void directoriesPastTheLimitAreCountedNotRead() throws Exception {
        Files.createDirectories(root.resolve(UID_A + "_cuda"));
        Files.createDirectories(root.resolve(UID_B + "_cuda"));
        ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ofMinutes(5)), 1);

        MonitorSnapshot snapshot = scanner.scan(List.of(), Optional.of("connection refused"), NOW);

        assertThat(snapshot.directories()).isEqualTo(1);
        assertThat(scanner.skipped()).containsEntry("over_limit", 1L);
        assertThat(snapshot.podsError()).contains("connection refused");
    }

    @Test
    void aReadThatBlocksIsGivenUpItsDirectoryNotReadAgainAndTheScanGoesOn() throws Exception {
        // A container can swap its .cache for a FIFO after the regular-file check: the open then blocks.
        Path dir = root.resolve(UID_A + "_cuda");
        SimulatedRegion.write(dir.resolve("r.cache"), 1, List.of(new SimulatedRegion.Device("GPU-1", 100, 0, 10, 1)),
                0);
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        try (ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ofMinutes(5)), 1024,
                file -> {
                    reads.incrementAndGet();
                    try {
                        never.await(); // a FIFO's open, which no interrupt ends; the test's stand-in ends on one
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    throw new java.io.IOException("released");
                }, Duration.ofMillis(200))) {
            List<PodInfo> pods = List.of(pod(UID_A, "a", false, ";GPU-1,NVIDIA,2048,50:;", "cuda"));

            MonitorSnapshot first = scanner.scan(pods, Optional.empty(), NOW);
            assertThat(first.containers()).as("the annotation stands in").singleElement()
                    .satisfies(c -> assertThat(c.source()).isEqualTo(ContainerUsage.Source.ANNOTATION));
            assertThat(scanner.skipped()).containsEntry("blocked", 1L);

            MonitorSnapshot second = scanner.scan(pods, Optional.empty(), NOW.plusSeconds(5));
            assertThat(reads).as("the directory is not read again").hasValue(1);
            assertThat(second.containers()).hasSize(1);
            assertThat(scanner.skipped()).containsEntry("blocked", 1L);
        } finally {
            never.countDown();
        }
    }

    @Test
    void anAnnotationMemoryPastWhatBytesHoldSaturatesInsteadOfFailingTheScan() {
        ContainerScanner scanner = new ContainerScanner(root, new CleanupPolicy(Duration.ofMinutes(5)), 1024);

        MonitorSnapshot snapshot = scanner.scan(List.of(pod(UID_A, "a", false,
                ";GPU-1,NVIDIA,9223372036854775807,0:;", "cuda")), Optional.empty(), NOW);

        assertThat(snapshot.containers()).singleElement().satisfies(container -> assertThat(container.devices())
                .singleElement().satisfies(device -> assertThat(device.limitBytes()).isEqualTo(Long.MAX_VALUE)));
    }

    @Test
    void noDirectoryYetIsAnEmptyScan() {
        ContainerScanner scanner = new ContainerScanner(root.resolve("absent"), new CleanupPolicy(Duration.ZERO), 8);
        MonitorSnapshot snapshot = scanner.scan(List.of(), Optional.empty(), NOW);
        assertThat(snapshot.directories()).isZero();
        assertThat(snapshot.at()).contains(NOW);
    }
}
