package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.tenantgateway.hami.Annotations;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registrar's node calls against fabric8's mock API server (CRUD mode, plain HTTP on loopback). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class NodePatcherTest {
    private static final String NODE = "worker-1";

    KubernetesClient client;
    private NodePatcher patcher;

    @BeforeEach
    void node() {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
                .addToAnnotations("hami.io/mutex.lock", "2026-12-07T20:45:34Z,team-a,p1").endMetadata()
                .withNewStatus().addToCapacity("cpu", new Quantity("8")).addToAllocatable("cpu", new Quantity("8"))
                .endStatus().build()).create();
        patcher = new NodePatcher(client, NODE);
    }

    @Test
    void annotationsAreMergedNamingOnlyOurKeysAndANullRemovesOne() {
        patcher.patchAnnotations(Map.of("hami.io/node-handshake", "Reported 2026-12-07 20:45:34",
                "hami.io/node-nvidia-register", "[]"));
        Map<String, String> remove = new LinkedHashMap<>();
        remove.put("hami.io/node-nvidia-register", null);
        patcher.patchAnnotations(remove);

        // fabric8's CRUD store keeps a merge patch's null as a null value where an API server drops the key; both
        // read as absent (Annotations.get).
        Map<String, String> annotations = patcher.get().getMetadata().getAnnotations();
        assertThat(Annotations.get(annotations, "hami.io/node-nvidia-register")).isNull();
        assertThat(annotations).containsEntry("hami.io/mutex.lock", "2026-12-07T20:45:34Z,team-a,p1")
                .containsEntry("hami.io/node-handshake", "Reported 2026-12-07 20:45:34");
    }

    @Test
    void capacityGoesToCapacityAndAllocatableAlikeAndANullRemovesIt() {
        Node answered = patcher.patchCapacity(Map.of("nvidia.com/gpu", "20", "nvidia.com/gpumem", "46068"));

        assertThat(answered.getStatus().getCapacity()).containsEntry("nvidia.com/gpu", new Quantity("20"))
                .containsEntry("cpu", new Quantity("8"));
        assertThat(patcher.get().getStatus().getAllocatable()).containsEntry("nvidia.com/gpumem", new Quantity("46068"));

        Map<String, String> remove = new LinkedHashMap<>();
        remove.put("nvidia.com/gpu", null);
        patcher.patchCapacity(remove);

        Node node = patcher.get(); // the CRUD store keeps the null (see above), an API server drops the resource
        assertThat(node.getStatus().getCapacity().get("nvidia.com/gpu")).isNull();
        assertThat(node.getStatus().getAllocatable().get("nvidia.com/gpu")).isNull();
        assertThat(node.getStatus().getCapacity()).containsEntry("nvidia.com/gpumem", new Quantity("46068"));
    }

    @Test
    void aMissingNodeReadsAsNull() {
        assertThat(new NodePatcher(client, "worker-2").get()).isNull();
    }
}
