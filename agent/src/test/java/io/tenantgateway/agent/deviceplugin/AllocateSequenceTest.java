package io.tenantgateway.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.tenantgateway.common.retry.Backoff;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.policy.AllocatePolicy;
import io.tenantgateway.deviceplugin.policy.ContainerAllocation;
import io.tenantgateway.deviceplugin.policy.VendorAllocation;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.NodeVendor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Decide then act for a pod step 1 found, against fabric8's mock API server (CRUD mode, loopback) and a host root in
 * a temporary directory; no device plugin, no kubelet.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocateSequenceTest extends MockNodeTestBase {
    @TempDir
    Path host;

    private FailureSettlement failures;
    private AllocateSequence sequence;

    @BeforeEach
    void start() {
        AllocatorConfig config = AllocatorConfig.defaults(NODE).withHostRoot(host).withPodFieldSelector(false)
                .withRetry(Backoff.hamiNodeLock(Duration.ofMillis(1)));
        PendingPodFinder finder = new PendingPodFinder(client, NODE, false);
        PodPatcher pods = new PodPatcher(client);
        NodeLockRelease locks = lockRelease(config.retry());
        failures = new FailureSettlement(client, config, finder, pods, locks, events, metrics, new ReentrantLock(),
                clock);
        AllocatePolicy policy = new AllocatePolicy(VendorAllocation.of(NodeVendor.NVIDIA, config.hamiCore()),
                config.hamiCore(), NODE);
        sequence = new AllocateSequence(policy, NodeVendor.NVIDIA, NODE, config.retry(), () -> Map.of("GPU-a", -1L),
                finder, pods, new HamiCoreHostFiles(config), failures, locks, events, metrics);
    }

    @AfterEach
    void stop() {
        failures.close();
    }

    @Test
    void theLastEntryErasedCompletesThePodAndReleasesItsLock() throws Exception {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        cluster.setLock("2026-12-07T20:45:34Z," + NS + ",p1");

        ContainerAllocation allocation = sequence.allocate(new PendingPodFinder.Found(pod, true), List.of("GPU-a-3"));

        assertThat(allocation.envs()).containsEntry("NVIDIA_VISIBLE_DEVICES", "GPU-a")
                .containsEntry("CUDA_DEVICE_MEMORY_LIMIT_0", "1000m").containsEntry("CUDA_DEVICE_SM_LIMIT", "10");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_SUCCESS);
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("allocated devices [GPU-a] on node worker-1"));
        assertThat(cluster.lock()).isNull();
        assertThat(host.resolve("usr/local/vgpu/containers/" + pod.getMetadata().getUid() + "_cuda")).isDirectory();
        assertThat(host.resolve("tmp/vgpulock")).isDirectory();
    }

    @Test
    void aRefusalThatFailsThePodErasesNothing() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");

        assertThatThrownBy(() -> sequence.allocate(new PendingPodFinder.Found(pod, false),
                List.of("GPU-a-0", "GPU-a-1"))).isInstanceOf(AllocationException.class)
                .hasMessage("device number not matched");

        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo("GPU-a,NVIDIA,1000,10:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_FAILED);
        assertThat(cluster.events(HamiAllocator.REASON_ALLOCATION_FAILED)).hasSize(1);
    }

    @Test
    void anEraseTheApiRefusesFailsThePodAndTellsKubelet() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        outage.failing = request -> "PATCH".equals(request.getMethod()) && request.getPath().contains("/pods/p1")
                && outage.refused.get() == 0; // only the erase: the failure's own write goes through

        assertThatThrownBy(() -> sequence.allocate(new PendingPodFinder.Found(pod, false), List.of("GPU-a-0")))
                .isInstanceOf(AllocationException.class)
                .hasMessageStartingWith("cannot erase the entry of container cuda: HTTP 500");

        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo("GPU-a,NVIDIA,1000,10:;");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo(Annotations.BIND_PHASE_FAILED);
        assertThat(failures.pendingPods()).isEmpty();
    }

    @Test
    void allocatedDevicesNameEveryVendorsDevicesNvidiaFirst() {
        assertThat(AllocateSequence.allocatedDevices(Map.of(
                "hami.io/dcu-devices-allocated", "DCU-1,DCU,1000,10:;",
                Annotations.POD_DEVICES_ALLOCATED, "GPU-b,NVIDIA,1000,10:GPU-a,NVIDIA,1000,10:;",
                "hami.io/other-devices-allocated", "not a list"))).containsExactly("GPU-b", "GPU-a", "DCU-1");
    }
}
