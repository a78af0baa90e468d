package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicySpec;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Validation;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.agent.testing.JarProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The own-node ValidatingAdmissionPolicy in {@code manifests/}, evaluated with a real CEL engine (cel-java) against
 * admission requests shaped like the API server's: {@code object}, {@code oldObject} and {@code request} as maps,
 * {@code variables} evaluated in order, as Kubernetes does. The expressions stay within standard CEL and the strings
 * extension, which both the API server and cel-java provide.
 */
@org.junit.jupiter.api.Disabled("WIP: every expression compiles, but cel-java 0.11.1 fails size() on a dyn list at"
        + " run time ('No matching overload ... size_string'); fix the harness before enabling")
class OwnNodePolicyCelTest {
    private static final Path MANIFESTS = Path.of(System.getProperty("user.dir")).resolve("../manifests").normalize();
    private static final String AGENT = "system:serviceaccount:kube-system:tenant-gateway";
    private static final String NODE_NAME_KEY = "authentication.kubernetes.io/node-name";

    private static final CelCompiler COMPILER = CelCompilerFactory.standardCelCompilerBuilder()
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .addVar("object", SimpleType.DYN)
            .addVar("oldObject", SimpleType.DYN)
            .addVar("request", SimpleType.DYN)
            .addVar("variables", MapType.create(SimpleType.STRING, SimpleType.DYN))
            .addLibraries(CelExtensions.strings())
            .build();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder()
            .addLibraries(CelExtensions.strings())
            .build();

    /** The outcome of one admission request: whether the policy applied, and the messages of failed validations. */
    record Outcome(boolean matched, List<String> denials) {
        boolean allowed() {
            return denials.isEmpty();
        }
    }

    private static Object eval(String expression, Map<String, Object> activation) {
        try {
            CelAbstractSyntaxTree ast = COMPILER.compile(expression).getAst();
            return RUNTIME.createProgram(ast).eval(activation);
        } catch (Exception e) {
            throw new AssertionError("CEL: " + expression + ": " + e.getMessage(), e);
        }
    }

    /** cel-java dispatches on Guava's immutable collections. */
    private static Object immutable(Object value) {
        if (value instanceof Map<?, ?> map) {
            com.google.common.collect.ImmutableMap.Builder<Object, Object> out =
                    com.google.common.collect.ImmutableMap.builder();
            map.forEach((k, v) -> out.put(k, immutable(v)));
            return out.buildOrThrow();
        }
        if (value instanceof List<?> list) {
            return list.stream().map(OwnNodePolicyCelTest::immutable)
                    .collect(com.google.common.collect.ImmutableList.toImmutableList());
        }
        return value;
    }

    private static Outcome admit(ValidatingAdmissionPolicy policy, Map<String, Object> request) {
        ValidatingAdmissionPolicySpec spec = policy.getSpec();
        Map<String, Object> variables = new LinkedHashMap<>();
        Map<String, Object> activation = new LinkedHashMap<>();
        activation.put("request", immutable(request));
        activation.put("object", immutable(request.get("object")));
        activation.put("oldObject", immutable(request.get("oldObject")));
        activation.put("variables", variables);
        for (var condition : spec.getMatchConditions()) {
            if (!Boolean.TRUE.equals(eval(condition.getExpression(), activation))) {
                return new Outcome(false, List.of());
            }
        }
        for (var variable : spec.getVariables()) {
            variables.put(variable.getName(), eval(variable.getExpression(), activation));
        }
        List<String> denials = new ArrayList<>();
        for (Validation validation : spec.getValidations()) {
            if (!Boolean.TRUE.equals(eval(validation.getExpression(), activation))) {
                denials.add(validation.getMessageExpression() != null
                        ? (String) eval(validation.getMessageExpression(), activation)
                        : validation.getMessage());
            }
        }
        return new Outcome(true, denials);
    }

    // ---- policies: the base file itself, and the rendered overlays

    private static ValidatingAdmissionPolicy policyIn(String yaml) {
        KubernetesSerialization serialization = new KubernetesSerialization();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (!document.isBlank()) {
                HasMetadata object = serialization.unmarshal(document);
                if (object instanceof ValidatingAdmissionPolicy policy) {
                    return policy;
                }
            }
        }
        throw new AssertionError("no ValidatingAdmissionPolicy");
    }

    private static ValidatingAdmissionPolicy basePolicy() throws IOException {
        return policyIn(Files.readString(MANIFESTS.resolve("base/own-node-policy.yaml")));
    }

    private static ValidatingAdmissionPolicy rendered(String overlay) throws IOException, InterruptedException {
        Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        Process process = new ProcessBuilder("kubectl", "kustomize", MANIFESTS.resolve(overlay).toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return policyIn(output);
    }

    // ---- sample admission requests

    private static Map<String, Object> node(String name, Map<String, Object> annotations, Map<String, Object> labels,
            Map<String, Object> capacity) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", name);
        metadata.put("resourceVersion", "100");
        metadata.put("annotations", annotations);
        metadata.put("labels", labels);
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("capacity", capacity);
        status.put("allocatable", capacity);
        status.put("addresses", List.of(Map.of("type", "InternalIP", "address", "10.0.0.7")));
        status.put("conditions", List.of(Map.of("type", "Ready", "status", "True")));
        return Map.of("apiVersion", "v1", "kind", "Node", "metadata", metadata,
                "spec", Map.of("podCIDR", "10.244.1.0/24", "taints",
                        List.of(Map.of("key", "nvidia.com/gpu", "effect", "NoSchedule"))), "status", status);
    }

    private static final Map<String, Object> ANNOTATIONS = Map.of(
            "hami.io/node-handshake", "Requesting_2026-12-01 08:00:00",
            "node.alpha.kubernetes.io/ttl", "0");
    private static final Map<String, Object> LABELS = Map.of("kubernetes.io/hostname", "worker-1", "gpu", "on");
    private static final Map<String, Object> CAPACITY = Map.of("cpu", "16", "memory", "64Gi", "pods", "110");

    private static Map<String, Object> with(Map<String, Object> map, String key, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(map);
        if (value == null) {
            copy.remove(key);
        } else {
            copy.put(key, value);
        }
        return copy;
    }

    /** An UPDATE (a PATCH, as admission sees it) of {@code node} by {@code user} whose token names {@code tokenNode}. */
    private static Map<String, Object> update(String user, List<String> tokenNode, String subResource,
            Map<String, Object> oldNode, Map<String, Object> newNode) {
        Map<String, Object> userInfo = new LinkedHashMap<>();
        userInfo.put("username", user);
        userInfo.put("groups", List.of("system:serviceaccounts", "system:authenticated"));
        if (tokenNode != null) {
            userInfo.put("extra", Map.of(NODE_NAME_KEY, tokenNode,
                    "authentication.kubernetes.io/pod-name", List.of("tenant-gateway-abcde")));
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("operation", "UPDATE");
        request.put("name", ((Map<?, ?>) newNode.get("metadata")).get("name"));
        request.put("resource", Map.of("group", "", "version", "v1", "resource", "nodes"));
        if (subResource != null) {
            request.put("subResource", subResource);
        }
        request.put("userInfo", userInfo);
        request.put("object", newNode);
        request.put("oldObject", oldNode);
        return request;
    }

    private static Map<String, Object> annotationPatch(String user, List<String> tokenNode, String node,
            String key, String value) {
        return update(user, tokenNode, null, node(node, ANNOTATIONS, LABELS, CAPACITY),
                node(node, with(ANNOTATIONS, key, value), LABELS, CAPACITY));
    }

    // ---- cases

    @Test
    void ownNodeHamiAnnotationsAreAllowed() throws IOException {
        ValidatingAdmissionPolicy policy = basePolicy();
        for (var change : List.of(Map.entry("hami.io/node-handshake", "Reported 2026-12-01 08:00:05"),
                Map.entry("hami.io/node-nvidia-register", "[{\"id\":\"GPU-0\"}]"))) {
            Outcome outcome = admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", change.getKey(),
                    change.getValue()));
            assertThat(outcome.matched()).isTrue();
            assertThat(outcome.denials()).as(change.getKey()).isEmpty();
        }
        // Releasing the node lock removes the key.
        Map<String, Object> locked = with(ANNOTATIONS, "hami.io/mutex.lock", "2026-12-01T08:00:00Z,ns,pod");
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), null, node("worker-1", locked, LABELS, CAPACITY),
                node("worker-1", ANNOTATIONS, LABELS, CAPACITY))).denials()).isEmpty();
    }

    @Test
    void anotherNodeIsDenied() throws IOException {
        Outcome outcome = admit(basePolicy(), annotationPatch(AGENT, List.of("worker-1"), "worker-2",
                "hami.io/node-handshake", "Reported 2026-12-01 08:00:05"));
        assertThat(outcome.matched()).isTrue();
        assertThat(outcome.denials()).containsExactly(
                "the agent on node worker-1 may write only its own Node, not worker-2");
    }

    @Test
    void aForeignAnnotationIsDenied() throws IOException {
        ValidatingAdmissionPolicy policy = basePolicy();
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", "example.com/x", "1"))
                .denials()).singleElement().asString().startsWith("the agent may change only the HAMi annotations")
                .endsWith("on its Node, not example.com/x");
        // Removing someone else's annotation counts too.
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1",
                "node.alpha.kubernetes.io/ttl", null)).denials()).singleElement().asString()
                .endsWith("not node.alpha.kubernetes.io/ttl");
    }

    @Test
    void labelsAndSpecAreDenied() throws IOException {
        ValidatingAdmissionPolicy policy = basePolicy();
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), null, before,
                node("worker-1", ANNOTATIONS, with(LABELS, "gpu", "off"), CAPACITY))).denials())
                .containsExactly("the agent may not change its Node's labels");
        Map<String, Object> untainted = new LinkedHashMap<>(before);
        untainted.put("spec", Map.of("podCIDR", "10.244.1.0/24"));
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), null, before, untainted)).denials())
                .singleElement().asString().startsWith("the agent may not change its Node's spec");
    }

    @Test
    void aTokenWithoutNodeNameIsDenied() throws IOException {
        Outcome outcome = admit(basePolicy(), annotationPatch(AGENT, null, "worker-1", "hami.io/node-handshake",
                "Reported 2026-12-01 08:00:05"));
        assertThat(outcome.matched()).isTrue();
        assertThat(outcome.denials()).singleElement().asString()
                .contains(NODE_NAME_KEY, "1.30", "ServiceAccountTokenPodNodeInfo");
        // An empty value list (malformed extra) is treated the same.
        assertThat(admit(basePolicy(), annotationPatch(AGENT, List.of(), "worker-1", "hami.io/node-handshake",
                "x")).denials()).singleElement().asString().contains(NODE_NAME_KEY);
    }

    @Test
    void otherServiceAccountsAreNotMatched() throws IOException {
        for (String user : List.of("system:serviceaccount:kube-system:konnectivity-agent", "system:node:worker-1",
                "system:serviceaccount:hami-system:hami-device-plugin")) {
            assertThat(admit(basePolicy(), annotationPatch(user, List.of("worker-1"), "worker-2", "example.com/x",
                    "1")).matched()).as(user).isFalse();
        }
    }

    @Test
    void statusWritesAreDeniedWithoutMockCapacity() throws IOException {
        Map<String, Object> gpus = with(CAPACITY, "nvidia.com/gpu", "10");
        assertThat(admit(basePolicy(), update(AGENT, List.of("worker-1"), "status",
                node("worker-1", ANNOTATIONS, LABELS, CAPACITY), node("worker-1", ANNOTATIONS, LABELS, gpus)))
                .denials()).singleElement().asString().startsWith("the agent writes Node status only with mock capacity");
    }

    @Test
    void mockCapacityAllowsOnlyGpuResourcesOnTheOwnNode() throws Exception {
        ValidatingAdmissionPolicy policy = rendered("overlays/simulated-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        Map<String, Object> gpus = new LinkedHashMap<>(CAPACITY);
        gpus.putAll(Map.of("nvidia.com/gpu", "10", "nvidia.com/gpumem", "81920", "nvidia.com/gpucores", "100",
                "nvidia.com/gpumem-percentage", "100"));
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, gpus))).denials()).isEmpty();
        // Deregistering (the keys removed) too.
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status",
                node("worker-1", ANNOTATIONS, LABELS, gpus), before)).denials()).isEmpty();

        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, with(gpus, "cpu", "1")))).denials()).singleElement()
                .asString().endsWith(", not cpu, cpu");
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-2", ANNOTATIONS, LABELS, gpus))).denials())
                .containsExactly("the agent on node worker-1 may write only its own Node, not worker-2");
        Map<String, Object> moved = node("worker-1", ANNOTATIONS, LABELS, gpus);
        @SuppressWarnings("unchecked")
        Map<String, Object> status = new LinkedHashMap<>((Map<String, Object>) moved.get("status"));
        status.put("addresses", List.of(Map.of("type", "InternalIP", "address", "192.0.2.1")));
        moved = with(moved, "status", status);
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before, moved)).denials())
                .containsExactly("the agent may not change its Node's conditions, addresses, kubelet endpoint or"
                        + " node info");
        // The main resource still allows only HAMi annotations.
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", "example.com/x", "1"))
                .denials()).hasSize(1);
    }

    @Test
    void kamajiMatchesKamajisServiceAccount() throws Exception {
        ValidatingAdmissionPolicy policy = rendered("overlays/kamaji");
        String kamaji = "system:serviceaccount:kube-system:konnectivity-agent";
        assertThat(admit(policy, annotationPatch(kamaji, List.of("worker-1"), "worker-1", "hami.io/node-handshake",
                "Reported 2026-12-01 08:00:05"))).isEqualTo(new Outcome(true, List.of()));
        assertThat(admit(policy, annotationPatch(kamaji, List.of("worker-1"), "worker-2", "hami.io/node-handshake",
                "x")).denials()).hasSize(1);
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-2", "example.com/x", "1"))
                .matched()).isFalse();
    }
}
