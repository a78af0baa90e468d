package io.tenantgateway.webhook;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** Pods as JSON trees, the way the API server sends them in {@code request.object}. */
final class Pods {
    static final JsonMapper JSON = JsonMapper.builder().build();

    private Pods() {
    }

    static PodBuilder pod(String name) {
        return new PodBuilder(name);
    }

    static ContainerBuilder container(String name) {
        return new ContainerBuilder(name);
    }

    static final class PodBuilder {
        private final ObjectNode pod = JSON.createObjectNode();
        private final ObjectNode spec;

        private PodBuilder(String name) {
            pod.put("apiVersion", "v1");
            pod.put("kind", "Pod");
            ObjectNode metadata = pod.putObject("metadata");
            metadata.put("name", name);
            metadata.put("namespace", "team-a");
            spec = pod.putObject("spec");
            spec.putArray("containers");
        }

        PodBuilder namespace(String namespace) {
            ((ObjectNode) pod.get("metadata")).put("namespace", namespace);
            return this;
        }

        PodBuilder container(ContainerBuilder container) {
            spec.withArrayProperty("containers").add(container.node);
            return this;
        }

        PodBuilder initContainer(ContainerBuilder container) {
            spec.withArrayProperty("initContainers").add(container.node);
            return this;
        }

        PodBuilder schedulerName(String name) {
            spec.put("schedulerName", name);
            return this;
        }

        PodBuilder nodeName(String name) {
            spec.put("nodeName", name);
            return this;
        }

        PodBuilder runtimeClassName(String name) {
            spec.put("runtimeClassName", name);
            return this;
        }

        ObjectNode build() {
            return pod.deepCopy();
        }
    }

    static final class ContainerBuilder {
        private final ObjectNode node = JSON.createObjectNode();

        private ContainerBuilder(String name) {
            node.put("name", name);
            node.put("image", "nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04");
        }

        ContainerBuilder limit(String resource, String quantity) {
            node.withObjectProperty("resources").withObjectProperty("limits").put(resource, quantity);
            return this;
        }

        /** A {@code resources.requests} entry (HAMi reads some resources from requests when limits lack them). */
        ContainerBuilder request(String resource, String quantity) {
            node.withObjectProperty("resources").withObjectProperty("requests").put(resource, quantity);
            return this;
        }

        ContainerBuilder gpu(String count) {
            return limit("nvidia.com/gpu", count);
        }

        ContainerBuilder env(String name, String value) {
            ObjectNode variable = node.withArrayProperty("env").addObject();
            variable.put("name", name);
            variable.put("value", value);
            return this;
        }

        ContainerBuilder privileged() {
            node.withObjectProperty("securityContext").put("privileged", true);
            return this;
        }
    }
}
