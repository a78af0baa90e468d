package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Each check fails, with a clear reason, when its part is broken on purpose. Breakages that do not disturb each
 * other's checks share one in-process lab run (three runs cover all twelve breakages). The step timeout is each wait's
 * ceiling, on broken parts (which wait it out) and working ones alike: 10 s, short enough to keep the waits on
 * broken parts bearable, long enough for a working part on a loaded machine.
 */
@Timeout(300)
class LabBreakagesIT {
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(10);
    private final List<String> progress = new CopyOnWriteArrayList<>();

    private LabReport run(Set<Integer> checks, Breakage... broken) throws InterruptedException {
        LabOptions options = new LabOptions(checks, Set.of(broken), STEP_TIMEOUT, Optional.empty());
        long start = System.nanoTime();
        try (Lab lab = new Lab(options, Clock.systemUTC(), line -> {
            progress.add(line);
            System.out.printf("%6d ms lab: %s%n", (System.nanoTime() - start) / 1_000_000, line);
        })) {
            LabReport report = lab.run();
            assertThat(lab.workDir()).exists();
            return report;
        }
    }

    @Test
    void tokenDevicesDevicePluginSharedApiServerAuthAndAscendWebhookBrokenFailChecksOneTwoFiveSixSevenAndTen()
            throws Exception {
        LabReport report = run(Set.of(1, 2, 5, 6, 7, 10), Breakage.AGENT_TOKEN, Breakage.DEVICE_REGISTRATION,
                Breakage.DEVICE_PLUGIN, Breakage.SHARED_API_SERVER, Breakage.SERVER_B_AUTH, Breakage.ASCEND_WEBHOOK);

        assertThat(report.passed()).isFalse();
        assertThat(report.checks()).allSatisfy(check -> assertThat(check.passed()).as("check %d", check.number())
                .isFalse());
        assertThat(report.check(1).evidence()).isEqualTo("tenant-a: tenant-a-kas-0 has agents [] (expected:"
                + " [worker-a]); tunnel agent worker-a not ready: server-connected failed: no servers connected");
        assertThat(report.check(2).evidence()).isEqualTo("worker-a: no hami.io/node-nvidia-register annotation (node"
                + " agent worker-a runs without device registration: --device-source=none)");
        assertThat(report.check(5).evidence()).startsWith("second bind refused: node worker-b has been locked within"
                + " 5m0s: node lock contention (lock of team-b/b-lock-1 still held after ")
                .endsWith(": nobody completed the allocation)");
        assertThat(report.check(6).evidence())
                .isEqualTo("tenant-a's API lists nodes [worker-a, worker-b, worker-b2] (expected: only worker-a)");
        assertThat(report.check(7).evidence()).isEqualTo("tenant-b-kas-0 accepted tenant-a's agent token (serverid"
                + " tenant-b-kas-0; expected: refused, it requires a tenant-b client certificate)");
        assertThat(report.check(10).evidence()).startsWith("tenant-b: pod b2-npu stored with schedulerName null"
                + " (expected: hami-scheduler; the webhook on worker-b found no HAMi device in it: it runs without"
                + " --enable-ascend, patch [");
        assertThat(progress).contains("BROKEN ON PURPOSE: tenant-b's agent runs without the device plugin (check 5"
                + " must fail)", "BROKEN ON PURPOSE: tenant-b's webhook runs without --enable-ascend (check 10 must"
                + " fail)");
    }

    @Test
    void webhookSharingDialPolicyServerAddressAndKubeletDirBrokenFailChecksThreeFourSevenEightAndNine()
            throws Exception {
        LabReport report = run(Set.of(1, 2, 3, 4, 6, 7, 8, 9), Breakage.WEBHOOK, Breakage.GPU_SHARING,
                Breakage.DIAL_POLICY, Breakage.SERVER_ADDRESS, Breakage.KUBELET_DIR);

        assertThat(report.check(3).passed()).isFalse();
        assertThat(report.check(3).evidence()).as("tenant-a's admission passed, tenant-b's has no webhook")
                .startsWith("tenant-b pod gpu-smoke: ")
                .containsPattern("(dial 127\\.0\\.0\\.1:\\d+ through tenant-b-kas-0 failed"
                        + "|TLS handshake with tenant-gateway-webhook\\.kube-system\\.svc .* failed)")
                .endsWith("(Service tenant-gateway-webhook.kube-system.svc has no endpoint: no webhook is serving"
                        + " on worker-b)");
        assertThat(report.check(4).passed()).isFalse();
        assertThat(report.check(4).evidence()).matches("a-share-2 refused by Filter: worker-a: no GPU fits container"
                + " cuda \\(1 × 20480 MiB, 25 % cores\\): #0 GPU-\\w+ shared by 1 of 1 pods \\(split count\\)");
        assertThat(report.check(7).passed()).isFalse();
        assertThat(report.check(7).evidence()).matches("tenant-a tunnel → tenant-b webhook 127\\.0\\.0\\.1:\\d+: "
                + "(dial succeeded \\(expected: denied by worker-a's dial policy\\)"
                + "|not stopped by worker-a's dial policy, the dial failed at the target: .+)");
        assertThat(report.check(8).passed()).isFalse();
        assertThat(report.check(8).evidence()).matches("agent worker-a did not reconnect to the restarted"
                + " tenant-a-kas-0 within 10\\.0 s: the server listens on 127\\.0\\.0\\.1:(\\d+), the agent dials"
                + " 127\\.0\\.0\\.1:(?!\\1)\\d+; agent not ready: server-connected failed: no servers connected");
        assertThat(report.check(9).passed()).isFalse();
        assertThat(report.check(9).evidence()).startsWith("worker-b: kubelet has no device plugin registered for"
                + " nvidia.com/gpu (kubelet.sock in ").contains("-elsewhere/nvidia-gpu.sock: serving on ",
                "waiting for kubelet: no ");
        assertThat(List.of(report.check(1), report.check(2), report.check(6))).allSatisfy(check ->
                assertThat(check.passed()).as("check %d: %s", check.number(), check.evidence()).isTrue());
    }

    @Test
    void monitorBrokenFailsCheckElevenWithoutWaiting() throws Exception {
        LabReport report = run(Set.of(11), Breakage.MONITOR);

        assertThat(report.check(11).passed()).isFalse();
        assertThat(report.check(11).evidence()).isEqualTo("worker-b: /metrics has 0 hami_vgpu_memory_limit_bytes"
                + " samples for team-b/b-monitor (agent worker-b runs without the vGPU monitor, --monitor=false:"
                + " nobody reads HAMi-core's regions or removes a deleted pod's cache directory)");
        assertThat(report.check(11).duration()).as("fails at once, not after a wait").isLessThan(STEP_TIMEOUT);
        assertThat(progress).contains("BROKEN ON PURPOSE: tenant-b's agents run without the vGPU monitor"
                + " (--monitor=false) (check 11 must fail)");
    }
}
