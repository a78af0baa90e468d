package io.tenantgateway.agent.monitor;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.hami.region.SimulatedRegion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code doctor}'s {@code monitor} line: each container directory as the monitor's own scan reads it. */
class MonitorDoctorTest {
    @TempDir
    Path host;

    private DoctorCheck doctor() {
        MonitorKind kind = new MonitorKind(Optional.of(new MonitorConfig("node-1",
                host.resolve("usr/local/vgpu/containers"), Optional.empty(), Duration.ofSeconds(5),
                Duration.ofMinutes(5), true, 1024)));
        List<DoctorCheck> checks = kind.doctor(DoctorStage.DEVICES, null);
        assertThat(kind.doctor(DoctorStage.API, null)).isEmpty();
        assertThat(checks).hasSize(1);
        return checks.get(0);
    }

    @Test
    void eachDirectoryIsShownReadSkippedOrWaitingForItsFirstCudaCall() throws Exception {
        Path containers = host.resolve("usr/local/vgpu/containers");
        SimulatedRegion.write(containers.resolve("a_cuda/r.cache"), 1, List.of(
                new SimulatedRegion.Device("GPU-1", 2048L << 20, 30, 512L << 20, 12)), 0);
        Files.createDirectories(containers.resolve("b_cuda"));
        Files.write(Files.createDirectories(containers.resolve("c_cuda")).resolve("x.cache"), new byte[16]);

        DoctorCheck check = doctor();

        assertThat(check.outcome()).isEqualTo(Outcome.WARN);
        assertThat(check.detail()).isEqualTo(containers + ": 3 container directories, 1 region(s) read, 1 skipped");
        assertThat(check.details()).containsExactly(
                "\"a_cuda\": 1 process(es); GPU-1 512 of 2048 MiB, 12% SM of 30%",
                "\"b_cuda\": no region yet (no CUDA call)",
                "\"c_cuda\": skipped (wrong_magic): magic 0 (expected: 19920718)");
    }

    @Test
    void noDirectoryYetPasses() {
        DoctorCheck check = doctor();
        assertThat(check.outcome()).isEqualTo(Outcome.PASS);
        assertThat(check.detail()).endsWith("no GPU container directory yet (the first Allocate makes it)");
    }
}
