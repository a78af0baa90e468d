package io.tenantgateway.agent.node;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.text.PeerText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Finds this node's name when {@code NODE_NAME} is not set (Kamaji's agent DaemonSet has no downward-API env): the
 * pod reads itself — name from {@code POD_NAME} or {@code HOSTNAME}, namespace from {@code POD_NAMESPACE} or the
 * service-account mount — and takes {@code spec.nodeName}, once it is a name Kubernetes could give a Node
 * ({@link #isValid}): a pod whose {@code spec.nodeName} holds a line feed or a terminal escape (no real API server
 * stores one) is refused with the name quoted ({@link PeerText#quote}), and what waits for the name keeps waiting.
 */
public final class NodeNames {
    static final Path NAMESPACE_FILE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
    /** What a Node's name is: Kubernetes validates Node names as RFC 1123 subdomains. */
    public static final String EXPECTED = "a lower-case RFC 1123 subdomain of at most 253 characters, as Kubernetes"
            + " names Nodes";
    private static final int MAX_LENGTH = 253;
    private static final Pattern NAME =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private NodeNames() {
    }

    /** Which pod this is (name, namespace), from the environment; not a pod → a configuration error. */
    public record PodIdentity(String namespace, String name) {
    }

    /**
     * This pod's identity from {@code POD_NAME}/{@code HOSTNAME} and {@code POD_NAMESPACE} or the service-account
     * mount: no API call.
     *
     * @throws ConfigException outside a pod (the message says to set {@code --node-name})
     */
    public static PodIdentity podIdentity() {
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
            throw new ConfigException("--node-name", "not set and not discoverable outside a pod",
                    "--node-name, or env NODE_NAME from the downward API fieldRef spec.nodeName");
        }
        return new PodIdentity(namespace, podName);
    }

    /** Whether {@code name} can be a Node's name ({@link #EXPECTED}). */
    public static boolean isValid(String name) {
        return name != null && name.length() <= MAX_LENGTH && NAME.matcher(name).matches();
    }

    /**
     * {@code name} when it {@linkplain #isValid can be} a Node's name; else a {@link ConfigException} naming
     * {@code flag} and the name, quoted.
     */
    public static String requireValid(String flag, String name) {
        if (!isValid(name)) {
            throw new ConfigException(flag, PeerText.quote(name), EXPECTED + "; set it from spec.nodeName");
        }
        return name;
    }

    /** Reads {@code spec.nodeName} of this pod through the API (one call; the caller retries). */
    public static String discover(Path kubeconfig, PodIdentity pod) {
        try (KubernetesClient client = KubernetesClients.create(kubeconfig)) {
            return discover(client, pod.namespace(), pod.name());
        }
    }

    /** {@link #podIdentity()} then {@link #discover(Path, PodIdentity)}: for commands that run once (doctor). */
    public static String discover(Path kubeconfig) {
        return discover(kubeconfig, podIdentity());
    }

    static String discover(KubernetesClient client, String namespace, String podName) {
        Pod pod;
        try {
            pod = client.pods().inNamespace(namespace).withName(podName).get();
        } catch (KubernetesClientException e) {
            throw new NodeNameUnavailableException("--node-name: not set, and reading pod " + namespace + "/"
                    + podName + " to find it failed: " + e.getMessage() + " (expected: --node-name or env NODE_NAME)",
                    e);
        }
        if (pod == null) {
            throw new IllegalArgumentException("--node-name: not set, and pod " + namespace + "/" + podName
                    + " not found (expected: --node-name or env NODE_NAME, or POD_NAME/POD_NAMESPACE naming this pod)");
        }
        if (pod.getSpec() == null || pod.getSpec().getNodeName() == null) {
            throw new IllegalArgumentException("--node-name: not set, and pod " + namespace + "/" + podName
                    + " has no spec.nodeName (expected: --node-name or env NODE_NAME)");
        }
        String nodeName = pod.getSpec().getNodeName();
        if (!isValid(nodeName)) {
            throw new InvalidNodeNameException("pod " + namespace + "/" + podName + " has spec.nodeName "
                    + PeerText.quote(nodeName) + " (expected: " + EXPECTED + ")");
        }
        return nodeName;
    }

    /**
     * The pod's {@code spec.nodeName} is no Node name (only a server that does not validate, or a forged answer, can
     * give one): not a configuration error, so the agent and its tunnel stay up, the readiness check of the node's
     * identity fails with the name quoted, and the parts that need the name do not start.
     */
    public static final class InvalidNodeNameException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        InvalidNodeNameException(String message) {
            super(message);
        }
    }

    /** The API did not answer the node-name lookup: worth retrying, unlike a pod without a node. */
    public static final class NodeNameUnavailableException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NodeNameUnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
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
