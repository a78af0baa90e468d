package io.tenantgateway.tools.lab;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.JarProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The built jar's {@code lab --json}, as the README's Quick start runs it: exit 0, every check PASS with the evidence
 * that shows what it checked, every registered device with its vendor, progress on stderr, nothing but JSON on
 * stdout, no Netty buffer leaked.
 */
@Timeout(150)
class LabJarIT {
    @TempDir
    Path dir;

    @Test
    void allElevenChecksPassWithTheirEvidence() throws Exception {
        long start = System.nanoTime();
        JarProcess.Result result = JarProcess.run(List.of(), List.of("-Dio.netty.leakDetection.level=paranoid"),
                "lab", "--json", "--work-dir", dir.toString(), "--timeout=" + WAIT.toSeconds() + "s");
        long processMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(result.exitCode()).as("exit code; stderr:%n%s%nstdout:%n%s", result.err(), result.out())
                .isZero();
        JsonNode report = JsonMapper.builder().build().readTree(result.out());
        System.out.printf("lab --json: wall %d ms in the lab, %d ms for the whole process%n",
                report.path("wallMillis").asLong(), processMillis);
        assertThat(report.path("passed").asBoolean()).isTrue();
        assertThat(report.path("scheduler").asString()).contains("SIMULATOR");
        JsonNode checks = report.path("checks");
        assertThat(checks.size()).isEqualTo(LabOptions.CHECK_COUNT);
        for (int i = 0; i < LabOptions.CHECK_COUNT; i++) {
            assertThat(checks.get(i).path("number").asInt()).isEqualTo(i + 1);
            assertThat(checks.get(i).path("result").asString()).as("check %d: %s", i + 1,
                    checks.get(i).path("evidence").asString()).isEqualTo("PASS");
        }
        assertThat(evidence(checks, 1)).contains("tenant-a-kas-0 (token auth) ← tunnel agent worker-a READY (Kamaji's"
                + " konnectivity-agent: tunnel + webhook, --enable-lock-controller=false; parts webhook), node agent"
                + " worker-a (--tunnel=false, --agent-id=worker-a-node) ready [shutdown, devices-registered,"
                + " device-plugin-registered, lock-controller-synced, monitor], no server connection; parts device"
                + " registration, device plugin, lock controller, vGPU monitor",
                "tenant-b-kas-0 (mTLS) ← agent worker-b READY, agent worker-b2 READY", "nodes [worker-a]",
                "nodes [worker-b, worker-b2]");
        assertThat(evidence(checks, 2)).contains("worker-a: 1 × NVIDIA A100-SXM4-80GB 81920 MiB split 10",
                "worker-b: 2 × NVIDIA L4 23034 MiB split 10", "handshake \"Reported ", "capacity nvidia.com/gpu=10",
                "capacity nvidia.com/gpu=20", "worker-b2: 1 × NVIDIA L4 23034 MiB split 10",
                "Ascend910B4 hami.io/node-register-Ascend910B4 (JSON): 2 × Ascend910B4 32768 MiB split 4 devcore 20",
                "hami-vnpu-core=false, capacity huawei.com/Ascend910B4=8",
                "Hygon hami.io/node-dcu-register (legacy text): 1 × DCU-K100 65536 MiB split 4 devcore 100",
                "capacity hygon.com/dcunum=4")
                .containsPattern("handshake \"Reported_\\d{4}\\.\\d{2}\\.\\d{2} \\d{2}:\\d{2}:\\d{2}\"")
                .containsPattern("handshake \"Reported \\d{4}-\\d{2}-\\d{2} [0-9:.]+ \\+0000 UTC m=\\+[0-9.]+\"");
        assertThat(evidence(checks, 3)).contains("via tenant-a-kas-0 → webhook on worker-a's tunnel agent: allowed",
                "via tenant-b-kas-0 → webhook on worker-b: allowed", "schedulerName=hami-scheduler gpu=1 gpucores=100");
        assertThat(evidence(checks, 4)).contains("a-share-1…4 (20480 MiB / 25 % each) share worker-a #0 GPU-",
                "a-share-5 refused by Filter: worker-a: no GPU fits container cuda (1 × 20480 MiB, 25 % cores)",
                "memory: 0 of 81920 MiB free, 20480 requested", "b-share-1 → #0 GPU-", "b-share-2 → #1 GPU-",
                " CUDA_DEVICE_MEMORY_LIMIT_0=20480m CUDA_DEVICE_SM_LIMIT=25 ",
                ", bind-phase success, node lock released by worker-a's node agent (its ",
                "; worker-a's tunnel agent runs neither))")
                .containsPattern("\\(a-share-1: admitted by worker-a's tunnel agent webhook 127\\.0\\.0\\.1:\\d+"
                        + " through tenant-a-kas-0, Allocate\\(cuda, \\[GPU-[0-9a-f-]+\\]\\) served by worker-a's"
                        + " node agent \\(--tunnel=false\\) device plugin nvidia-gpu\\.sock → env"
                        + " NVIDIA_VISIBLE_DEVICES=GPU-")
                .containsPattern("node lock released by worker-a's node agent \\(its (lock controller|device plugin"
                        + " after Allocate);");
        assertThat(evidence(checks, 5)).contains("worker-b: bind b-lock-1 ok, node lock held", "until the agent's device"
                + " plugin completed the allocation in kubelet's Allocate", "bind b-lock-2 ok");
        assertThat(evidence(checks, 6)).contains("tenant-a API: node worker-a (1 × NVIDIA A100-SXM4-80GB)",
                "all in team-a", "tenant-b API: node worker-b (2 × NVIDIA L4), node worker-b2 (1 × NVIDIA L4,"
                        + " 1 × DCU-K100, 2 × Ascend910B4)", "all in team-b");
        assertThat(evidence(checks, 7)).contains("tenant-a token → tenant-b-kas-0: refused",
                "tenant-b certificate → tenant-a-kas-0: refused (UNAUTHENTICATED")
                .containsPattern("tenant-a tunnel → tenant-b webhook 127\\.0\\.0\\.1:\\d+: dial to 127\\.0\\.0\\.1:\\d+"
                        + " denied by policy \\(port not in allow list\\)")
                .containsPattern("tenant-b tunnel → tenant-a webhook 127\\.0\\.0\\.1:\\d+: dial to 127\\.0\\.0\\.1:\\d+"
                        + " denied by policy \\(port not in allow list\\)")
                .containsPattern("tenant-a tunnel → worker-a admin port 127\\.0\\.0\\.1:\\d+: dial to"
                        + " 127\\.0\\.0\\.1:\\d+ denied by policy \\(agent admin port\\)")
                .containsPattern("tenant-b tunnel → worker-b admin port 127\\.0\\.0\\.1:\\d+: dial to"
                        + " 127\\.0\\.0\\.1:\\d+ denied by policy \\(agent admin port\\)");
        assertThat(evidence(checks, 8)).contains("tenant-a-kas-0 stopped and started again", "agent worker-a"
                + " reconnected", "pod after-restart admitted through the new server: schedulerName=hami-scheduler",
                "; node agent worker-a (--tunnel=false) stayed ready");
        assertThat(evidence(checks, 9)).contains("worker-b: device plugin registered with kubelet (v1beta1, endpoint"
                + " nvidia-gpu.sock, nvidia.com/gpu, preferred allocation on), ListAndWatch 20 × Healthy",
                "kubelet Allocate(cuda, [GPU-", "CUDA_DEVICE_MEMORY_LIMIT_0=2048m CUDA_DEVICE_SM_LIMIT=20",
                "CUDA_DEVICE_MEMORY_SHARED_CACHE=/usr/local/vgpu/", "/etc/ld.so.preload←/usr/local/vgpu/ld.so.preload (ro)",
                "hami.io/vgpu-devices-to-allocate \";;;\", bind-phase success, node lock released")
                .containsPattern("env NVIDIA_VISIBLE_DEVICES=GPU-[0-9a-f-]{36} ");
        assertThat(evidence(checks, 10)).contains(
                "b2-npu (huawei.com/Ascend910B4: 1, huawei.com/Ascend910B4-memory: 6144 → 8192 by the webhook on"
                        + " worker-b) → worker-b2 #0 ", "on Ascend910B4.sock → env ASCEND_VISIBLE_DEVICES=0"
                        + " ASCEND_VNPU_SPECS=vir05_1c_8g, bind-phase success, node lock released",
                "on hygon.com_dcunum → (no env: dcu-vgpu-device-plugin answers none; device nodes omitted in"
                        + " simulation), hami.io/dcu-devices-allocated \"DCU-",
                "bind-phase allocating, node lock held; Allocate(npu) → env ASCEND_VISIBLE_DEVICES=1, bind-phase"
                        + " success, node lock released once (1 NodeLockReleased event)",
                "b2-init (init container load: 1 DCU, app: none): node lock taken at Bind, kubelet Allocate(load)"
                        + " only, hami.io/dcu-devices-to-allocate \";;\", bind-phase success, node lock released");
        assertThat(evidence(checks, 11)).contains("worker-b: b-monitor, b-monitor-live (1024 MiB / 10 % each)"
                + " allocated through kubelet; before b-monitor's first CUDA call (/usr/local/vgpu/containers/",
                "_cuda/ empty) /metrics hami_vgpu_memory_limit_bytes{…,limit_source=\"annotation\"} 1073741824 (",
                "(limits from Allocate's env: 1024 MiB, SM 10 %): 256 MiB, SM 5 % → read by the first scan after it",
                "then /metrics hami_vgpu_memory_used_bytes 268435456, hami_vgpu_memory_limit_bytes{…,limit_source="
                        + "\"region\"} 1073741824, hami_container_device_utilization_ratio 5; listener 127.0.0.1:",
                " hami_vgpu_memory_used_bytes 268435456; /ui row team-b/b-monitor cuda 256 MiB / 1024 MiB, 5 % / 10 %",
                "b-monitor-live: 256 MiB)", "second write 512 MiB, SM 10 % → /metrics 536870912, listener 536870912,"
                        + " /ui 512 MiB", "(grace 1s), tenant_gateway_monitor_cache_directories_removed_total 0 → 1,"
                        + " no sample names it; b-monitor-live's directory")
                .containsPattern("HAMi-core stand-in wrote /usr/local/vgpu/[0-9a-f-]{36}\\.cache ")
                .containsPattern("pod b-monitor deleted → its directory removed \\d+\\.\\d s later")
                .containsPattern("b-monitor-live's directory and the [1-9]\\d* other live containers' stayed$");
        JsonNode devices = report.path("devices");
        assertThat(devices.size()).isEqualTo(7);
        assertThat(devices.valueStream().map(d -> d.path("node").asString() + " " + d.path("vendor").asString()
                + " " + d.path("type").asString()).toList()).containsExactly("worker-a NVIDIA NVIDIA A100-SXM4-80GB",
                "worker-b NVIDIA NVIDIA L4", "worker-b NVIDIA NVIDIA L4", "worker-b2 NVIDIA NVIDIA L4",
                "worker-b2 Hygon DCU-K100", "worker-b2 Ascend Ascend910B4", "worker-b2 Ascend Ascend910B4");
        for (JsonNode tenant : report.path("tenants")) {
            assertThat(tenant.path("statusPage").asString()).startsWith("http://127.0.0.1:").endsWith("/ui");
            assertThat(tenant.path("apiServer").asString()).startsWith("http://127.0.0.1:");
        }
        // worker-a, Kamaji-style: two agents, each with its own pages and its own doctor line.
        JsonNode agentsA = report.path("tenants").get(0).path("agents");
        assertThat(agentsA.valueStream().map(a -> a.path("node").asString() + " " + a.path("role").asString())
                .toList()).containsExactly("worker-a tunnel + webhook", "worker-a node role, --tunnel=false");
        assertThat(agentsA.get(0).path("doctor").asString()).contains("--proxy-server-port=", "--webhook-listen=",
                "--enable-lock-controller=false")
                .doesNotContain("--device-source", "--device-plugin", "--tunnel=false");
        assertThat(agentsA.get(1).path("doctor").asString()).contains("--tunnel=false", "--device-source=mock",
                "--device-plugin=true", "--enable-lock-controller=true").doesNotContain("--proxy-server", "--webhook",
                "--ca-cert", "--dial-allow");
        assertThat(agentsA.get(0).path("statusPage").asString()).isNotEqualTo(agentsA.get(1).path("statusPage")
                .asString());

        assertThat(result.err()).contains("lab: [1/11] control planes up, agents connected …", "lab: [11/11] PASS");
        Path log = dir.resolve("lab.log");
        assertThat(log).exists();
        assertThat(Files.readString(log)).doesNotContain("LEAK:");
    }

    private static String evidence(JsonNode checks, int number) {
        return checks.get(number - 1).path("evidence").asString();
    }
}
