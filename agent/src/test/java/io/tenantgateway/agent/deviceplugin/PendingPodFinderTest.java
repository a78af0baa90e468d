package io.tenantgateway.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.deviceplugin.AllocationException;
import io.tenantgateway.deviceplugin.policy.PodView;
import io.tenantgateway.hami.Annotations;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Allocate's step 1 against fabric8's mock API server (CRUD mode, plain HTTP on loopback). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class PendingPodFinderTest {
    static final String NODE = "worker-1";
    static final String NS = "team-a";

    KubernetesClient client;
    private HamiClusterView cluster;
    private PendingPodFinder finder;

    @BeforeEach
    void node() {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build()).create();
        cluster = new HamiClusterView(client, new PrometheusRegistry(), NODE, NS);
        finder = new PendingPodFinder(client, NODE, false);
    }

    /** A pod after HAMi's Bind: assigned and bound here, {@code allocating}, bound at {@code bindTime}. */
    static Pod bound(KubernetesClient client, String name, String bindTime) {
        return client.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName(name)
                .withNamespace(NS).withAnnotations(Map.of(
                        Annotations.POD_VGPU_NODE, NODE,
                        Annotations.POD_DEVICES_TO_ALLOCATE, "GPU-a,NVIDIA,1000,10:;",
                        Annotations.POD_DEVICES_ALLOCATED, "GPU-a,NVIDIA,1000,10:;",
                        Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_ALLOCATING,
                        Annotations.POD_BIND_TIME, bindTime)).endMetadata()
                .withNewSpec().withNodeName(NODE).addToContainers(new ContainerBuilder().withName("cuda")
                        .withImage("cuda:12").addNewEnv().withName("LITERAL").withValue("1").endEnv()
                        .addNewEnv().withName("FROM_FIELD").withNewValueFrom().withNewFieldRef()
                        .withFieldPath("metadata.name").endFieldRef().endValueFrom().endEnv().build()).endSpec()
                .withNewStatus().withPhase("Pending").endStatus().build()).create();
    }

    @ParameterizedTest
    @ValueSource(strings = {"2026-12-07T20:45:34Z", "2026-12-07T20:45:34.123456789Z"})
    void theLocksHolderIsTheOneWhetherItsTimeHasSecondsOrNanoseconds(String lockedAt) throws Exception {
        bound(client, "older", "100");
        bound(client, "holder", "200");
        cluster.setLock(lockedAt + "," + NS + ",holder");

        PendingPodFinder.Found found = finder.find();

        assertThat(found.pod().getMetadata().getName()).isEqualTo("holder");
        assertThat(found.byLock()).isTrue();
    }

    @Test
    void withoutALockThePendingPodBoundFirstIsFound() throws Exception {
        bound(client, "later", "200");
        bound(client, "first", "100");

        PendingPodFinder.Found found = finder.find();

        assertThat(found.pod().getMetadata().getName()).isEqualTo("first");
        assertThat(found.byLock()).isFalse();
    }

    @Test
    void aLockNamingAMissingPodIsAnErrorWithoutFallback() {
        bound(client, "pending", "100");
        cluster.setLock("2026-12-07T20:45:34Z," + NS + ",gone");

        assertThatThrownBy(finder::find).isInstanceOf(AllocationException.class)
                .hasMessage("pod team-a/gone named by hami.io/mutex.lock on node worker-1 not found");
    }

    @Test
    void aMalformedLockIsAnErrorWithoutFallback() {
        bound(client, "pending", "100");
        cluster.setLock("2026-12-07T20:45:34Z,only-two");

        assertThatThrownBy(finder::find).isInstanceOf(AllocationException.class)
                .hasMessageStartingWith("malformed lock annotation: expected 3 parts, got 2");
    }

    @Test
    void noPendingPodOrNoNodeIsHamisError() {
        assertThatThrownBy(finder::find).isInstanceOf(AllocationException.class)
                .hasMessage("no binding pod found on node worker-1");
        assertThatThrownBy(new PendingPodFinder(client, "worker-2", false)::find)
                .isInstanceOf(AllocationException.class).hasMessage("node worker-2 not found");
    }

    @Test
    void aRereadReturnsTheCurrentPodOrTheOldOneWhenItIsGone() {
        Pod old = bound(client, "p1", "100");
        client.pods().inNamespace(NS).withName("p1").edit(p -> new PodBuilder(p).editMetadata()
                .addToAnnotations(Annotations.POD_BIND_PHASE, Annotations.BIND_PHASE_SUCCESS).endMetadata().build());

        assertThat(Annotations.get(finder.reread(old).getMetadata().getAnnotations(), Annotations.POD_BIND_PHASE))
                .isEqualTo(Annotations.BIND_PHASE_SUCCESS);
        client.pods().inNamespace(NS).withName("p1").delete();
        assertThat(finder.reread(old)).isSameAs(old);
    }

    @Test
    void theViewCarriesLiteralEnvironmentValuesOnly() {
        PodView view = PendingPodFinder.view(bound(client, "p1", "100"));

        assertThat(view.key()).isEqualTo("team-a/p1");
        assertThat(view.nodeName()).isEqualTo(NODE);
        assertThat(view.phase()).isEqualTo("Pending");
        assertThat(view.containers()).singleElement().satisfies(c -> assertThat(c.env())
                .containsExactly(Map.entry("LITERAL", "1")));
        assertThat(view.initContainers()).isEmpty();
    }
}
