package io.tenantgateway.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.tenantgateway.agent.locks.policy.LockPolicy;
import io.tenantgateway.agent.locks.policy.ReleaseReason;
import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The owner-checked release of the node lock against fabric8's mock API server (CRUD mode, loopback). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeLockReleaseTest extends MockNodeTestBase {
    private NodeLockRelease release;

    @BeforeEach
    void start() {
        release = lockRelease(Backoff.hamiNodeLock(Duration.ofMillis(1)));
    }

    @ParameterizedTest
    @CsvSource({"2026-12-07T20:45:34Z, 2.0", "2026-12-07T20:45:34.123456789Z, 1.876543211"})
    void thePodsOwnLockIsReleasedWithItsEventAndHoldTime(String lockedAt, double heldSeconds) {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        String lock = lockedAt + "," + NS + ",p1";
        cluster.setLock(lock);

        assertThat(release.release(pod, ReleaseReason.ALLOCATED)).isNull();

        assertThat(cluster.lock()).isNull();
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).singleElement().satisfies(e -> assertThat(
                e.getMessage()).isEqualTo("released hami.io/mutex.lock \"" + lock + "\": allocated (allocation of"
                + " team-a/p1 completed)"));
        assertThat(cluster.lockReleases(ReleaseReason.ALLOCATED)).isEqualTo(1);
        assertThat(holdSeconds()).isCloseTo(heldSeconds, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void anotherPodsLockOrNoLockIsKept() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        assertThat(release.release(pod, ReleaseReason.FAILED)).isNull();

        cluster.setLock("2026-12-07T20:45:34Z," + NS + ",p2");
        assertThat(release.release(pod, ReleaseReason.FAILED)).isNull();

        assertThat(cluster.lock()).isEqualTo("2026-12-07T20:45:34Z,team-a,p2");
        assertThat(cluster.events(LockPolicy.REASON_LOCK_RELEASED)).isEmpty();
    }

    @Test
    void aReleaseTheApiRefusesIsRetriedWithHamisBackoffThenHandedBack() {
        Pod pod = PendingPodFinderTest.bound(client, "p1", "100");
        cluster.setLock("2026-12-07T20:45:34Z," + NS + ",p1");
        outage.writesDown();

        KubernetesClientException left = release.release(pod, ReleaseReason.FAILED);

        assertThat(left).isNotNull().extracting(KubernetesClientException::getCode).isEqualTo(500);
        assertThat(outage.refused.get()).isGreaterThan(1);
        outage.heal();
        assertThat(cluster.lock()).isEqualTo("2026-12-07T20:45:34Z,team-a,p1");
        assertThat(release.release(pod, ReleaseReason.FAILED)).isNull();
        assertThat(cluster.lock()).isNull();
    }

    private double holdSeconds() {
        return registry.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals("tenant_gateway_node_lock_hold_seconds"))
                .map(HistogramSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream())
                .mapToDouble(HistogramSnapshot.HistogramDataPointSnapshot::getSum).sum();
    }
}
