package io.tenantgateway.agent.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds this node's name when {@code NODE_NAME} is not set (Kamaji's agent DaemonSet has no downward-API env): the
 * pod reads itself — name from {@code POD_NAME} or {@code HOSTNAME}, namespace from {@code POD_NAMESPACE} or the
 * service-account mount — and takes {@code spec.nodeName}.
 */
public final class NodeNames {
    static final Path NAMESPACE_FILE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

    private NodeNames() {
    }

    public static String discover(Path kubeconfig) {
        String podName = firstNonBlank(System.getenv("POD_NAME"), System.getenv("HOSTNAME"));
        String namespace = System.getenv("POD_NAMESPACE");
        if (namespace == null || namespace.isBlank()) {
            try {
                namespace = Files.isReadable(NAMESPACE_FILE) ? Files.readString(NAMESPACE_FILE).strip() : null;
            } catch (IOException e) {
                namespace = null;
            }
        }
        if (podName == null || namespace == null) {
            throw new IllegalArgumentException("--node-name: not set and not discoverable outside a pod (expected:"
                    + " --node-name, or env NODE_NAME from the downward API fieldRef spec.nodeName)");
        }
        try (KubernetesClient client = KubernetesClients.create(kubeconfig)) {
            return discover(client, namespace, podName);
        }
    }

    static String discover(KubernetesClient client, String namespace, String podName) {
        Pod pod;
        try {
            pod = client.pods().inNamespace(namespace).withName(podName).get();
        } catch (KubernetesClientException e) {
            throw new IllegalArgumentException("--node-name: not set, and reading pod " + namespace + "/" + podName
                    + " to find it failed: " + e.getMessage() + " (expected: --node-name or env NODE_NAME)", e);
        }
        if (pod == null || pod.getSpec() == null || pod.getSpec().getNodeName() == null) {
            throw new IllegalArgumentException("--node-name: not set, and pod " + namespace + "/" + podName
                    + " has no spec.nodeName (expected: --node-name or env NODE_NAME)");
        }
        return pod.getSpec().getNodeName();
    }

    private static String firstNonBlank(String... values) {
        for (String value : values) {
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        return null;
    }
}
