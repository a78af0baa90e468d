package io.tenantgateway.agent.locks;

import static io.tenantgateway.agent.locks.LockTestCluster.GPU_A;
import static io.tenantgateway.agent.locks.LockTestCluster.NODE;
import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.hami.Annotations;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Server errors and a restart while releasing the lock of a holder the device plugin allocated, injected over real
 * HTTP: the mock server answers an expectation (registered for the next N requests) before falling back to CRUD.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WriteFailureIT extends LockClusterTestBase {
    private static final String POD_PATH = "/api/v1/namespaces/team-a/pods/p1";
    private static final String NODE_PATH = "/api/v1/nodes/node-a";

    @BeforeEach
    void setUp() {
        cluster.createGpuPod("p1");
        cluster.filterAndBind("p1", GPU_A);
        cluster.markAllocated("p1"); // the device plugin's Allocate did its part; the release is left to the reaper
    }

    private static Status status(int code, String reason) {
        return new StatusBuilder().withCode(code).withReason(reason).withMessage("injected " + code).withStatus("Failure").build();
    }

    @Test
    void serverErrorsAreRetriedWithoutCrashing() throws Exception {
        cluster.server.expect().patch().withPath(NODE_PATH).andReturn(500, status(500, "InternalError")).times(2);
        cluster.takeRequests();
        PrometheusRegistry registry = new PrometheusRegistry();

        AllocationController controller = cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        // Two writes failed (500), a later one, after re-reading the pod and the node, succeeded.
        List<String> requests = cluster.takeRequests().stream()
                .filter(r -> r.equals("PATCH " + NODE_PATH) || r.equals("GET " + POD_PATH)).toList();
        assertThat(requests).filteredOn(r -> r.startsWith("PATCH")).hasSizeGreaterThanOrEqualTo(3);
        assertThat(requests).startsWith("PATCH " + NODE_PATH).containsSubsequence("PATCH " + NODE_PATH,
                "GET " + POD_PATH, "PATCH " + NODE_PATH);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(1);

        // Still working: the next allocated pod's lock goes as usual.
        cluster.createGpuPod("p2");
        cluster.filterAndBind("p2", GPU_A);
        cluster.markAllocated("p2");
        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(2);
        assertThat(controller.synced()).isTrue();
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(2);
    }

    @Test
    void aRestartedAgentFinishesTheReleaseItsPredecessorLeft() throws Exception {
        // The first agent's every lock write fails until it is stopped.
        cluster.server.expect().patch().withPath(NODE_PATH).andReturn(500, status(500, "InternalError")).always();
        PrometheusRegistry registry = new PrometheusRegistry();
        AllocationController stopped = cluster.startController(registry);
        await().atMost(WAIT).until(() ->
                cluster.takeRequests().stream().anyMatch(r -> r.equals("PATCH " + NODE_PATH)));
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isZero();
        stopped.close();
        assertThat(cluster.lock(NODE)).isEqualTo("2025-06-01T10:00:00Z,team-a,p1");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");

        // The successor shares the registry's metrics, as the agent's parts do.
        cluster.server.clearExpectations();
        cluster.startController(registry);

        await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.lock(NODE)).isNull());
        cluster.awaitReleaseEvents(1);
        assertThat(LockTestCluster.releases(registry, ReleaseReason.ALLOCATED)).isEqualTo(1);
        assertThat(cluster.annotation("p1", Annotations.POD_BIND_PHASE)).isEqualTo("success");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_TO_ALLOCATE)).isEqualTo(";");
        assertThat(cluster.annotation("p1", Annotations.POD_DEVICES_ALLOCATED)).isEqualTo(GPU_A + ",NVIDIA,10000,30:;");
    }
}
