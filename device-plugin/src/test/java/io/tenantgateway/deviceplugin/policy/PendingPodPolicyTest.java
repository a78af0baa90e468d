package io.tenantgateway.deviceplugin.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.Annotations;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which pod an Allocate call is for: the lock's holder first (HAMi PR #3095), HAMi's search otherwise. */
class PendingPodPolicyTest {
    private final PendingPodPolicy policy = new PendingPodPolicy("worker-1");

    private static PodView pod(String name, String phase, String bindPhase, String bindTime, String vgpuNode) {
        Map<String, String> annotations = new LinkedHashMap<>();
        if (bindPhase != null) {
            annotations.put(Annotations.POD_BIND_PHASE, bindPhase);
        }
        if (bindTime != null) {
            annotations.put(Annotations.POD_BIND_TIME, bindTime);
        }
        if (vgpuNode != null) {
            annotations.put(Annotations.POD_VGPU_NODE, vgpuNode);
        }
        return new PodView("team-a", name, "uid-" + name, "worker-1", phase, "1", annotations, List.of(),
                List.of(ContainerView.of("c")));
    }

    private static PodView unbound(PodView pod) {
        return new PodView(pod.namespace(), pod.name(), pod.uid(), null, pod.phase(), pod.resourceVersion(),
                pod.annotations(), pod.initContainers(), pod.containers());
    }

    @Test
    void theLockNamesThePod() {
        assertThat(policy.fromLock("2025-06-01T10:00:00Z,team-a,p2")).isEqualTo(new PodChoice.ByLock("team-a", "p2"));
    }

    @Test
    void withoutALockOrWithALegacyOneThePendingPodIsLookedFor() {
        assertThat(policy.fromLock(null)).isInstanceOf(PodChoice.Search.class);
        assertThat(policy.fromLock("2025-06-01T10:00:00Z")).isInstanceOf(PodChoice.Search.class);
    }

    @Test
    void aMalformedLockRefusesWithoutFallback() {
        assertThat(policy.fromLock("2025-06-01T10:00:00Z,team-a")).isEqualTo(new PodChoice.Refuse(
                "malformed lock annotation: expected 3 parts, got 2: hami.io/mutex.lock \"2025-06-01T10:00:00Z,team-a\""
                        + " on node worker-1"));
    }

    @Test
    void theLocksPodMustBeMeantForThisNode() {
        assertThat(policy.checkLockHolder(pod("p", "Pending", "allocating", "1", "worker-1"))).isNull();
        assertThat(policy.checkLockHolder(pod("p", "Pending", "allocating", "1", "worker-2"))).isEqualTo(
                "pod team-a/p named by hami.io/mutex.lock is not assigned to node worker-1 (hami.io/vgpu-node:"
                        + " worker-2)");
        assertThat(policy.checkLockHolder(unbound(pod("p", "Pending", "allocating", "1", "worker-1")))).isEqualTo(
                "pod team-a/p named by hami.io/mutex.lock is not bound to node worker-1 yet (its Bind is in"
                        + " progress): this Allocate is for another pod");
    }

    @Test
    void theSearchTakesThePendingPodWithTheOldestBind() {
        List<PodView> pods = List.of(
                pod("running", "Running", "allocating", "10", "worker-1"),
                pod("no-bind-time", "Pending", "allocating", null, "worker-1"),
                pod("failed", "Pending", "failed", "10", "worker-1"),
                pod("elsewhere", "Pending", "allocating", "10", "worker-2"),
                pod("newer", "Pending", "allocating", "30", "worker-1"),
                pod("older", "Pending", "success", "20", "worker-1"));

        assertThat(policy.pick(pods)).map(PodView::name).contains("older");
        assertThat(policy.pick(pods.subList(0, 4))).isEmpty();
        assertThat(policy.noBindingPod()).isEqualTo("no binding pod found on node worker-1");
    }
}
