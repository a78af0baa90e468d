package io.tenantgateway.agent.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class NodeIdentityTest {
    private static final NodeNames.PodIdentity POD = new NodeNames.PodIdentity("kube-system", "konnectivity-agent-x");

    @Test
    void aGivenNameIsKnownAtOnce() throws Exception {
        NodeIdentity node = NodeIdentity.known("worker-1");
        assertThat(node.discovered()).isFalse();
        assertThat(node.name()).contains("worker-1");
        assertThat(node.whenKnown()).isCompletedWithValue("worker-1");
        assertThat(node.describe()).isEqualTo("worker-1");
        assertThat(node.discover()).isEqualTo("worker-1");
    }

    @Test
    void unsetIsNeverKnownAndNotDiscovered() {
        NodeIdentity node = NodeIdentity.of(Optional.empty());
        assertThat(node.discovered()).isFalse();
        assertThat(node.name()).isEmpty();
        assertThat(node.whenKnown()).isNotDone();
        assertThat(node.describe()).isEqualTo("<unset>");
        assertThatThrownBy(node::discover).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aDiscoveredNameIsPendingUntilALookupSucceedsAndThenTellsWhoAwaitsIt() throws Exception {
        Deque<Object> answers = new ArrayDeque<>(List.of(new IllegalArgumentException("pod not found"), "gpu-node-3"));
        NodeIdentity node = NodeIdentity.fromPod(POD, () -> {
            Object next = answers.pop();
            if (next instanceof RuntimeException e) {
                throw e;
            }
            return (String) next;
        });
        List<String> told = new CopyOnWriteArrayList<>();
        CompletableFuture<String> awaited = node.whenKnown();
        awaited.thenAccept(told::add);

        assertThat(node.discovered()).isTrue();
        assertThat(node.describe()).isEqualTo("<discovering from pod kube-system/konnectivity-agent-x>");
        assertThatThrownBy(node::discover).hasMessage("pod not found");
        assertThat(node.name()).isEmpty();
        assertThat(told).isEmpty();

        assertThat(node.discover()).isEqualTo("gpu-node-3");
        assertThat(told).containsExactly("gpu-node-3");
        assertThat(node.name()).contains("gpu-node-3");
        assertThat(node.describe()).isEqualTo("gpu-node-3");
        assertThat(node.discover()).as("known: no further lookup").isEqualTo("gpu-node-3");
    }

    @Test
    void whoAwaitsTheNameCannotCompleteItForEveryoneElse() {
        NodeIdentity node = NodeIdentity.fromPod(POD, () -> "gpu-node-3");
        node.whenKnown().complete("forged");
        assertThat(node.name()).isEmpty();
    }
}
