package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NAMESPACE;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Binding;
import io.tenantgateway.tools.hamisim.BindResult;
import io.tenantgateway.tools.hamisim.HamiSchedulerSimulator;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.ContainerDevice;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scheduler simulator's writes, which the lock tests and the lab rely on, match HAMi's. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HamiSchedulerSimulatorIT extends LockClusterTestBase {
    @BeforeEach
    void setUp() {
        cluster.createGpuPod("p1");
        cluster.createGpuPod("p2");
    }

    @Test
    void filterWritesTheDeviceAnnotationsAndTheNodeLabel() {
        cluster.scheduler.filter(NAMESPACE, "p1", NODE, List.of(List.of(), List.of(ContainerDevice.nvidia(GPU_A, 6144, 30))));

        var metadata = cluster.pod("p1").getMetadata();
        String devices = ";" + GPU_A + ",NVIDIA,6144,30:;";
        assertThat(metadata.getAnnotations())
                .containsEntry(Annotations.POD_VGPU_NODE, NODE)
                .containsEntry(Annotations.POD_VGPU_TIME, "1748772000")
                .containsEntry(Annotations.POD_DEVICES_TO_ALLOCATE, devices)
                .containsEntry(Annotations.POD_DEVICES_ALLOCATED, devices);
        assertThat(metadata.getLabels()).containsEntry(Annotations.POD_VGPU_NODE, NODE);
    }

    @Test
    void bindLocksTheNodeMarksThePodAllocatingAndBindsIt() {
        cluster.filterAndBind("p1", GPU_A);

        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("allocating");
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_TIME)).isEqualTo("1748772000");
        assertThat(cluster.pod("p1").getSpec().getNodeName()).isEqualTo(NODE);
    }

    @Test
    void aLockIsTakenOverOnlyWhenStrictlyOlderThanTheTimeout() {
        cluster.filterAndBind("p1", GPU_A);

        cluster.clock.advance(LockTestCluster.TIMEOUT);
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE))
                .isEqualTo(new BindResult(false, "node node-a has been locked within 5m0s: node lock contention"));
        assertThat(cluster.annotation("p2", Annotations.POD_BIND_PHASE)).as("lock first, then annotations").isNull();

        cluster.clock.advance(Duration.ofSeconds(1));
        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE)).isEqualTo(new BindResult(true, ""));
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:05:01Z,team-a,p2");
    }

    @Test
    void aLockWhosePodIsGoneIsTakenOver() {
        cluster.filterAndBind("p1", GPU_A);
        cluster.client.pods().inNamespace(NAMESPACE).withName("p1").delete();

        assertThat(cluster.scheduler.bind(NAMESPACE, "p2", NODE)).isEqualTo(new BindResult(true, ""));
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p2");
    }

    @Test
    void aMalformedLockRefusesEveryBind() {
        cluster.setLock(NODE, "2025-06-01T10:00:00Z,team-a");

        assertThat(cluster.scheduler.bind(NAMESPACE, "p1", NODE))
                .isEqualTo(new BindResult(false, "malformed lock annotation: expected 3 parts, got 2"));
        assertThat(cluster.pod("p1").getSpec().getNodeName()).isNull();
    }

    @Test
    void bindingSubresourceModePostsABinding() throws Exception {
        var simulator = new HamiSchedulerSimulator(cluster.client, cluster.clock, LockTestCluster.TIMEOUT,
                HamiSchedulerSimulator.BindMethod.BINDING_SUBRESOURCE, Backoff.HAMI_NODE_LOCK);
        cluster.takeRequests();

        assertThat(simulator.bind(NAMESPACE, "p1", NODE).bound()).isTrue();

        assertThat(cluster.takeRequests()).contains("POST /api/v1/namespaces/team-a/bindings");
        // CRUD mode stores the Binding as it was sent (a real API server binds the pod instead).
        Binding binding = cluster.client.resources(Binding.class).inNamespace(NAMESPACE).withName("p1").get();
        assertThat(binding.getTarget().getKind()).isEqualTo("Node");
        assertThat(binding.getTarget().getName()).isEqualTo(NODE);
    }
}
