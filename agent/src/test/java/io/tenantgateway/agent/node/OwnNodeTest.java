package io.tenantgateway.agent.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.node.NodeRegistrations.State;
import io.tenantgateway.agent.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The status page's view of the agent's own Node (fabric8's CRUD mock API server): one GET on demand, in the
 * background, at most one at a time and at most every {@link OwnNode#TTL}; or the lock controller's informer copy,
 * decoded again only when it changed.
 */
@Timeout(60)
@EnableKubernetesMockClient(crud = true, https = false)
class OwnNodeTest {
    private static final String HYGON = "hami.io/node-dcu-register";
    private static final Instant START = Instant.parse("2026-11-30T12:00:00Z");

    KubernetesMockServer server;
    KubernetesClient client;

    private final MutableClock clock = new MutableClock(START);
    /** The background GETs, run when the test says. */
    private final Queue<Runnable> reads = new ArrayDeque<>();

    private OwnNode view(String node) {
        return new OwnNode(client, NodeIdentity.known(node), reads::add, clock);
    }

    private static Node node(String name, String hygon) {
        return new NodeBuilder().withNewMetadata().withName(name).withResourceVersion("7")
                .addToAnnotations(HYGON, hygon).endMetadata().withNewStatus()
                .addToCapacity("aws.amazon.com/neuron", new Quantity("2")).endStatus().build();
    }

    private void runReads() {
        while (!reads.isEmpty()) {
            reads.poll().run();
        }
    }

    @Test
    void readsOnDemandInTheBackgroundOneAtATimeAndAtMostEveryTtl() {
        client.nodes().resource(node("worker-1", "DCU-a,4,65520,100,DCU-K100,0,true,0,hami-core:")).create();
        OwnNode own = view("worker-1");

        assertThat(own.fetched()).isEqualTo(NodeRegistrations.pending("worker-1",
                "reading node worker-1 through the API"));
        assertThat(own.fetched().state()).isEqualTo(State.PENDING);
        assertThat(reads).as("one GET in flight at a time").hasSize(1);

        runReads();
        NodeRegistrations read = own.fetched();
        assertThat(read.state()).isEqualTo(State.READ);
        assertThat(read.readAt()).isEqualTo(START);
        assertThat(read.source()).isEqualTo("API get, at most every 10s while viewed");
        assertThat(read.registrations()).extracting(r -> r.key() + "=" + r.vendor() + ":" + r.deviceCount())
                .containsExactly(HYGON + "=Hygon:1", "aws.amazon.com/neuron=AWS Neuron:2");
        assertThat(reads).as("fresh: no GET").isEmpty();

        client.nodes().withName("worker-1").edit(n -> {
            n.getMetadata().getAnnotations().put(HYGON, "DCU-a,4,lots,100,DCU-K100,0,true,0,hami-core:");
            return n;
        });
        clock.advance(OwnNode.TTL.minusSeconds(1));
        assertThat(own.fetched()).isSameAs(read);
        assertThat(reads).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(own.fetched()).as("the last read until the GET is done").isSameAs(read);
        assertThat(reads).hasSize(1);
        runReads();
        assertThat(own.fetched().registrations().get(0).error())
                .isEqualTo("invalid memory field: strconv.ParseInt: parsing \"lots\": invalid syntax");
    }

    @Test
    void aMissingNodeAFailedReadAndAnUnknownNameSaySo() {
        OwnNode missing = view("worker-9");
        missing.fetched();
        runReads();
        assertThat(missing.fetched()).isEqualTo(NodeRegistrations.failed("worker-9", "node worker-9 not found", START,
                OwnNode.GET));

        server.expect().get().withPath("/api/v1/nodes/worker-2").andReturn(403, new StatusBuilder()
                .withStatus("Failure").withReason("Forbidden").withCode(403).withMessage("nodes \"worker-2\" is"
                        + " forbidden: User cannot get resource").build()).always();
        OwnNode forbidden = view("worker-2");
        forbidden.fetched();
        runReads();
        assertThat(forbidden.fetched().state()).isEqualTo(State.FAILED);
        assertThat(forbidden.fetched().detail()).startsWith("cannot read node worker-2: tenant API "
                + client.getConfiguration().getMasterUrl().replaceAll("/+$", "") + " answered 403: ")
                .contains("nodes \"worker-2\" is forbidden: User cannot get resource");

        OwnNode unknown = new OwnNode(client, NodeIdentity.of(Optional.empty()), reads::add, clock);
        assertThat(unknown.fetched()).isEqualTo(NodeRegistrations.pending("", "node name not known yet (<unset>)"));
        assertThat(reads).as("no GET without a name").isEmpty();
    }

    @Test
    void theInformersCopyIsDecodedOnlyWhenItChanged() {
        OwnNode own = view("worker-1");
        assertThat(own.fromInformer(Optional.empty(), false)).isEqualTo(NodeRegistrations.pending("worker-1",
                "the lock controller has not listed node worker-1 yet"));
        assertThat(own.fromInformer(Optional.empty(), true)).isEqualTo(NodeRegistrations.failed("worker-1",
                "node worker-1 not found", START, OwnNode.INFORMER));

        NodeRegistrations first = own.fromInformer(Optional.of(node("worker-1",
                "DCU-a,4,65520,100,DCU-K100,0,true,0,hami-core:")), true);
        assertThat(first.state()).isEqualTo(State.READ);
        assertThat(first.registrations()).hasSize(2).allSatisfy(r -> assertThat(r.ok()).isTrue());
        assertThat(own.fromInformer(Optional.of(node("worker-1", "DCU-a,4,65520,100,DCU-K100,0,true,0,hami-core:")),
                true)).as("same resourceVersion: not decoded again").isSameAs(first);

        Node changed = node("worker-1", "x");
        changed.getMetadata().setResourceVersion("8");
        assertThat(own.fromInformer(Optional.of(changed), true).registrations().get(0).error())
                .isEqualTo("node annotation missing device separator");
        assertThat(reads).as("the informer's copy needs no GET").isEmpty();
    }

    @Test
    void annotationsAndCapacityOfABareNodeAreEmpty() {
        Node bare = new NodeBuilder().withNewMetadata().withName("bare").endMetadata().build();
        assertThat(OwnNode.annotations(bare)).isEmpty();
        assertThat(OwnNode.capacity(bare)).isEmpty();
        assertThat(OwnNode.capacity(node("n", "x"))).isEqualTo(Map.of("aws.amazon.com/neuron", "2"));
    }
}
