package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.collect.ImmutableCollection;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypeProvider;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerBuilder;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicySpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.RenderedManifests;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The own-node ValidatingAdmissionPolicy in {@code manifests/}, its expression text read from the YAML (the base file,
 * and the policy as {@code kubectl kustomize} renders the overlays), compiled and evaluated with a real CEL engine
 * (cel-java) against admission requests shaped like the API server's.
 *
 * <p>The environment follows the API server's ({@code k8s.io/apiserver/pkg/admission/plugin/cel}):
 * <ul>
 *   <li>{@code object} and {@code oldObject} are {@code dyn}; {@code request} is the object type the API server
 *       declares ({@code kubernetes.AdmissionRequest}: {@code kind}, {@code resource}, {@code subResource},
 *       {@code name}, {@code operation}, {@code userInfo}, ...), whose {@code userInfo.extra} is
 *       {@code map(string, list(string))}. At run time all three are plain maps and lists, as the API server passes
 *       the unstructured objects;
 *   <li>{@code variables} is an object type whose fields are the variables compiled so far, each typed by its
 *       expression's output type: a variable sees only those declared before it, and is referenced as
 *       {@code variables.name};
 *   <li>matchConditions and validations must have type {@code bool}, messageExpressions {@code string};
 *   <li>matchConstraints (operation, resource/subresource) and matchConditions decide whether the policy applies;
 *       every failing validation denies, with its messageExpression or else its message.
 * </ul>
 * Standard CEL with the standard macros ({@code has}, {@code filter}, ...) plus the strings extension
 * ({@code join}), in the compiler and in the runtime alike; the API server has those too (and more, which the policy
 * must not use).
 *
 * <p>Where the engines can differ, and what this test does about it:
 * <ul>
 *   <li>cel-java 0.11.1's checker leaves the result of indexing a {@code dyn} ({@code dyn_value['key']}) as a free
 *       type variable, which the next overloaded function binds to its first overload: {@code size(x['k'])} on a
 *       {@code dyn} x compiles to {@code size_string} only and fails at run time with "No matching overload for
 *       function 'size'. Overload candidates: size_string". cel-go types it {@code dyn}. With {@code request} typed as
 *       the API server types it, the policy never calls a typed function on such an index; keep it that way (index
 *       {@code object}/{@code oldObject} only into {@code ==}, {@code !=} or {@code in}).
 *   <li>The API server evaluates variables lazily and turns a run-time error into a denial (failurePolicy: Fail);
 *       here every variable is evaluated and any error fails the test, which is stricter.
 *   <li>Cost limits, the schema-based type checking the API server reports in the policy's status (warnings only),
 *       {@code params}, {@code namespaceObject} and {@code authorizer} are not modelled; the policy uses none of them.
 * </ul>
 */
class OwnNodePolicyCelTest {
    private static final Path MANIFESTS = Path.of(System.getProperty("user.dir")).resolve("../manifests").normalize();
    private static final String AGENT = "system:serviceaccount:kube-system:tenant-gateway";
    private static final String NODE_NAME_KEY = "authentication.kubernetes.io/node-name";

    // ---- the API server's CEL environment for admission policies

    private static StructType struct(String name, Map<String, CelType> fields) {
        Map<String, CelType> copy = new LinkedHashMap<>(fields);
        return StructType.create(name, ImmutableSet.copyOf(copy.keySet()), field -> Optional.ofNullable(copy.get(field)));
    }

    private static Map<String, CelType> fields(Object... nameTypePairs) {
        Map<String, CelType> fields = new LinkedHashMap<>();
        for (int i = 0; i < nameTypePairs.length; i += 2) {
            fields.put((String) nameTypePairs[i], (CelType) nameTypePairs[i + 1]);
        }
        return fields;
    }

    // apiserver BuildRequestType().
    private static final StructType GVK = struct("kubernetes.GroupVersionKind",
            fields("group", SimpleType.STRING, "version", SimpleType.STRING, "kind", SimpleType.STRING));
    private static final StructType GVR = struct("kubernetes.GroupVersionResource",
            fields("group", SimpleType.STRING, "version", SimpleType.STRING, "resource", SimpleType.STRING));
    private static final StructType USER_INFO = struct("kubernetes.UserInfo", fields(
            "username", SimpleType.STRING,
            "uid", SimpleType.STRING,
            "groups", ListType.create(SimpleType.STRING),
            "extra", MapType.create(SimpleType.STRING, ListType.create(SimpleType.STRING))));
    private static final StructType REQUEST = struct("kubernetes.AdmissionRequest", fields(
            "kind", GVK,
            "resource", GVR,
            "subResource", SimpleType.STRING,
            "requestKind", GVK,
            "requestResource", GVR,
            "requestSubResource", SimpleType.STRING,
            "name", SimpleType.STRING,
            "namespace", SimpleType.STRING,
            "operation", SimpleType.STRING,
            "userInfo", USER_INFO,
            "dryRun", SimpleType.BOOL,
            "options", SimpleType.DYN));
    private static final String VARIABLES_TYPE = "kubernetes.variables";

    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder()
            .addLibraries(CelExtensions.strings())
            .build();

    /** A compiler for one expression; {@code variables} null where the expression cannot see them (matchConditions). */
    private static CelCompiler compiler(Map<String, CelType> variables) {
        List<CelType> types = new ArrayList<>(List.of(GVK, GVR, USER_INFO, REQUEST));
        CelCompilerBuilder builder = CelCompilerFactory.standardCelCompilerBuilder()
                .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addLibraries(CelExtensions.strings())
                .addVar("object", SimpleType.DYN)
                .addVar("oldObject", SimpleType.DYN)
                .addVar("request", REQUEST);
        if (variables != null) {
            StructType variablesType = struct(VARIABLES_TYPE, variables);
            types.add(variablesType);
            builder.addVar("variables", variablesType);
        }
        Map<String, CelType> byName = new LinkedHashMap<>();
        types.forEach(type -> byName.put(type.name(), type));
        return builder.setTypeProvider(new CelTypeProvider() {
            @Override
            public ImmutableCollection<CelType> types() {
                return ImmutableList.copyOf(byName.values());
            }

            @Override
            public Optional<CelType> findType(String typeName) {
                return Optional.ofNullable(byName.get(typeName));
            }
        }).build();
    }

    private record Expression(String text, CelAbstractSyntaxTree ast, CelRuntime.Program program) {
        Object eval(Map<String, Object> activation) {
            try {
                return program.eval(activation);
            } catch (CelEvaluationException e) {
                throw new AssertionError("CEL evaluation: " + text + ": " + e.getMessage(), e);
            }
        }
    }

    private static Expression compile(CelCompiler compiler, String text, CelType resultType) {
        CelValidationResult result = compiler.compile(text);
        assertThat(result.hasError()).as("CEL compile: %s: %s", text, result.getErrorString()).isFalse();
        try {
            CelAbstractSyntaxTree ast = result.getAst();
            if (resultType != null) {
                assertThat(ast.getResultType()).as("type of %s", text).isEqualTo(resultType);
            }
            return new Expression(text, ast, RUNTIME.createProgram(ast));
        } catch (CelValidationException | CelEvaluationException e) {
            throw new AssertionError("CEL: " + text + ": " + e.getMessage(), e);
        }
    }

    private record CompiledValidation(Expression expression, Expression messageExpression, String message) {
    }

    record CompiledPolicy(ValidatingAdmissionPolicy policy, List<Expression> matchConditions,
            Map<String, Expression> variables, List<CompiledValidation> validations) {
    }

    static CompiledPolicy compile(ValidatingAdmissionPolicy policy) {
        ValidatingAdmissionPolicySpec spec = policy.getSpec();
        CelCompiler noVariables = compiler(null);
        List<Expression> matchConditions = spec.getMatchConditions().stream()
                .map(condition -> compile(noVariables, condition.getExpression(), SimpleType.BOOL)).toList();
        Map<String, CelType> variableTypes = new LinkedHashMap<>();
        Map<String, Expression> variables = new LinkedHashMap<>();
        for (var variable : spec.getVariables()) {
            Expression expression = compile(compiler(variableTypes), variable.getExpression(), null);
            variables.put(variable.getName(), expression);
            variableTypes.put(variable.getName(), expression.ast().getResultType());
        }
        CelCompiler all = compiler(variableTypes);
        List<CompiledValidation> validations = spec.getValidations().stream()
                .map(validation -> new CompiledValidation(compile(all, validation.getExpression(), SimpleType.BOOL),
                        validation.getMessageExpression() == null ? null
                                : compile(all, validation.getMessageExpression(), SimpleType.STRING),
                        validation.getMessage()))
                .toList();
        return new CompiledPolicy(policy, matchConditions, variables, validations);
    }

    /** The outcome of one admission request: whether the policy applied, and the messages of failed validations. */
    record Outcome(boolean matched, List<String> denials) {
        boolean allowed() {
            return denials.isEmpty();
        }
    }

    /** matchConstraints.resourceRules: operation and resource (with its subresource) only, as the policy uses. */
    private static boolean constrained(ValidatingAdmissionPolicySpec spec, AdmissionRequest request) {
        Map<?, ?> resource = (Map<?, ?>) request.request().get("resource");
        Object subResource = request.request().get("subResource");
        String name = resource.get("resource") + (subResource == null ? "" : "/" + subResource);
        return spec.getMatchConstraints().getResourceRules().stream().anyMatch(rule ->
                rule.getOperations().contains(request.request().get("operation"))
                        && rule.getApiGroups().contains(resource.get("group"))
                        && rule.getApiVersions().contains(resource.get("version"))
                        && rule.getResources().contains(name));
    }

    static Outcome admit(CompiledPolicy policy, AdmissionRequest request) {
        if (!constrained(policy.policy().getSpec(), request)) {
            return new Outcome(false, List.of());
        }
        Map<String, Object> activation = new LinkedHashMap<>();
        activation.put("request", request.request());
        activation.put("object", request.object());
        activation.put("oldObject", request.oldObject());
        for (Expression condition : policy.matchConditions()) {
            if (!Boolean.TRUE.equals(condition.eval(activation))) {
                return new Outcome(false, List.of());
            }
        }
        Map<String, Object> variables = new LinkedHashMap<>();
        activation.put("variables", variables);
        policy.variables().forEach((name, expression) -> variables.put(name, expression.eval(activation)));
        List<String> denials = new ArrayList<>();
        for (CompiledValidation validation : policy.validations()) {
            if (!Boolean.TRUE.equals(validation.expression().eval(activation))) {
                String message = validation.messageExpression() == null ? ""
                        : (String) validation.messageExpression().eval(activation);
                if (message.isBlank()) {
                    message = validation.message() != null ? validation.message()
                            : "failed expression: " + validation.expression().text();
                }
                denials.add(message);
            }
        }
        return new Outcome(true, denials);
    }

    // ---- policies: the base file itself, and the rendered overlays

    private static final String OWN_NODE_POLICY = "tenant-gateway-own-node";

    /** The ValidatingAdmissionPolicy named {@code name} in {@code yaml} (a rendered overlay holds several). */
    static ValidatingAdmissionPolicy policyIn(String yaml, String name) {
        KubernetesSerialization serialization = new KubernetesSerialization();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (!document.isBlank()) {
                HasMetadata object = serialization.unmarshal(document);
                if (object instanceof ValidatingAdmissionPolicy policy
                        && name.equals(policy.getMetadata().getName())) {
                    return policy;
                }
            }
        }
        throw new AssertionError("no ValidatingAdmissionPolicy " + name);
    }

    private static CompiledPolicy basePolicy() throws IOException {
        return compile(policyIn(Files.readString(MANIFESTS.resolve("base/own-node-policy.yaml")), OWN_NODE_POLICY));
    }

    private static CompiledPolicy rendered(String overlay) throws IOException, InterruptedException {
        return rendered(overlay, OWN_NODE_POLICY);
    }

    /** The policy {@code name} as {@code kubectl kustomize} renders {@code overlay}. */
    static CompiledPolicy rendered(String overlay, String name) throws IOException, InterruptedException {
        Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        Process process = new ProcessBuilder("kubectl", "kustomize", MANIFESTS.resolve(overlay).toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return compile(policyIn(output, name));
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

    /** The Node's {@code CAPACITY} with {@code added} resources. */
    private static Map<String, Object> capacityWith(Map<String, ?> added) {
        Map<String, Object> capacity = new LinkedHashMap<>(CAPACITY);
        capacity.putAll(added);
        return capacity;
    }

    private static Map<String, Object> with(Map<String, Object> map, String key, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(map);
        if (value == null) {
            copy.remove(key);
        } else {
            copy.put(key, value);
        }
        return copy;
    }

    /** What the API server binds: {@code request} (without the objects), {@code object}, {@code oldObject}. */
    record AdmissionRequest(Map<String, Object> request, Map<String, Object> object, Map<String, Object> oldObject) {
    }

    /** A pod-bound token from a cluster without ServiceAccountTokenPodNodeInfo: pod extras, no node name. */
    private static final List<String> NO_NODE_NAME = List.of("(none)");
    /** A token with no extra at all (not bound to a pod). */
    private static final List<String> NO_EXTRA = List.of("(no extra)");

    /** The start of an AdmissionRequest for the core/v1 {@code kind} ({@code resource}) named as {@code object} is. */
    static Map<String, Object> coreRequest(String uid, String kind, String resource, Map<String, Object> object) {
        Map<String, Object> kindField = Map.of("group", "", "version", "v1", "kind", kind);
        Map<String, Object> resourceField = Map.of("group", "", "version", "v1", "resource", resource);
        return new LinkedHashMap<>(Map.of("uid", uid, "kind", kindField, "resource", resourceField, "requestKind",
                kindField, "requestResource", resourceField, "name", ((Map<?, ?>) object.get("metadata")).get("name")));
    }

    /**
     * An UPDATE (a PATCH, as admission sees it) of {@code node} by {@code user} whose token names {@code tokenNode}
     * (or {@link #NO_NODE_NAME}, {@link #NO_EXTRA}).
     */
    private static AdmissionRequest update(String user, List<String> tokenNode, String subResource,
            Map<String, Object> oldNode, Map<String, Object> newNode) {
        Map<String, Object> userInfo = new LinkedHashMap<>();
        userInfo.put("username", user);
        userInfo.put("uid", "5b0c8f9e-0000-4000-8000-000000000001");
        userInfo.put("groups", List.of("system:serviceaccounts", "system:serviceaccounts:kube-system",
                "system:authenticated"));
        if (tokenNode != NO_EXTRA) {
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("authentication.kubernetes.io/credential-id", List.of("JTI=0f5e7c1a"));
            extra.put("authentication.kubernetes.io/pod-name", List.of("tenant-gateway-abcde"));
            extra.put("authentication.kubernetes.io/pod-uid", List.of("5b0c8f9e-0000-4000-8000-000000000002"));
            if (tokenNode != NO_NODE_NAME) {
                extra.put(NODE_NAME_KEY, tokenNode);
                extra.put("authentication.kubernetes.io/node-uid", List.of("5b0c8f9e-0000-4000-8000-000000000003"));
            }
            userInfo.put("extra", extra);
        }
        Map<String, Object> request = coreRequest("7d3f0c2e-0000-4000-8000-000000000004", "Node", "nodes", newNode);
        if (subResource != null) {
            request.put("subResource", subResource);
            request.put("requestSubResource", subResource);
        }
        request.put("operation", "UPDATE");
        request.put("userInfo", userInfo);
        request.put("dryRun", false);
        request.put("options", Map.of("apiVersion", "meta.k8s.io/v1", "kind", "PatchOptions",
                "fieldManager", "tenant-gateway"));
        return new AdmissionRequest(request, newNode, oldNode);
    }

    private static AdmissionRequest annotationPatch(String user, List<String> tokenNode, String node,
            String key, String value) {
        return update(user, tokenNode, null, node(node, ANNOTATIONS, LABELS, CAPACITY),
                node(node, with(ANNOTATIONS, key, value), LABELS, CAPACITY));
    }

    // ---- cases

    @Test
    void ownNodeHamiAnnotationsAreAllowed() throws IOException {
        CompiledPolicy policy = basePolicy();
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
        CompiledPolicy policy = basePolicy();
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
        CompiledPolicy policy = basePolicy();
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
        for (List<String> token : List.of(NO_NODE_NAME, NO_EXTRA)) {
            Outcome outcome = admit(basePolicy(), annotationPatch(AGENT, token, "worker-1", "hami.io/node-handshake",
                    "Reported 2026-12-01 08:00:05"));
            assertThat(outcome.matched()).isTrue();
            assertThat(outcome.denials()).as("%s", token).singleElement().asString()
                    .contains(NODE_NAME_KEY, "1.30", "ServiceAccountTokenPodNodeInfo");
        }
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
    void simulatedVendorsRegistrationsAreAllowedAndLookalikesAreNot() throws IOException {
        CompiledPolicy policy = basePolicy();
        for (var change : List.of(Map.entry("hami.io/node-dcu-register", "DCU-A,4,65536,100,DCU-K100,0,true,0,hami:"),
                Map.entry("hami.io/node-handshake-dcu", "Reported 2026-12-01 08:00:05.1 +0000 UTC m=+5.1"),
                Map.entry("hami.io/node-register-Ascend910B4", "[{\"id\":\"A\"}]"),
                Map.entry("hami.io/node-handshake-Ascend910B4", "Reported_2026.12.01 08:00:06"),
                Map.entry("hami-vnpu-core", "false"))) {
            assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", change.getKey(),
                    change.getValue())).denials()).as(change.getKey()).isEmpty();
        }
        for (String foreign : List.of("hami.io/node-register-xpu", "hami.io/node-Ascend910B4-register",
                "hami.io/vgpu-devices-to-allocate")) {
            assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", foreign, "x"))
                    .denials()).as(foreign).singleElement().asString().endsWith("on its Node, not " + foreign);
        }
    }

    @Test
    void mockCapacityAllowsSimulatedVendorsResources() throws Exception {
        CompiledPolicy policy = rendered("overlays/simulated-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        Map<String, Object> devices = capacityWith(Map.of("hygon.com/dcunum", "4", "hygon.com/dcumem", "65536",
                "hygon.com/dcucores", "100", "huawei.com/Ascend910B4", "8", "huawei.com/Ascend910B4-memory", "65536",
                "huawei.com/Ascend910B4-core", "40"));
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, devices))).denials()).isEmpty();
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, with(devices, "huawei.com/npu", "1")))).denials())
                .singleElement().asString().endsWith(", not huawei.com/npu, huawei.com/npu");
    }

    @Test
    void mockCapacityAllowsOnlyGpuResourcesOnTheOwnNode() throws Exception {
        CompiledPolicy policy = rendered("overlays/simulated-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        Map<String, Object> gpus = capacityWith(Map.of("nvidia.com/gpu", "10", "nvidia.com/gpumem", "81920",
                "nvidia.com/gpucores", "100", "nvidia.com/gpumem-percentage", "100"));
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

    // ---- --report-node-capacity (components/report-node-capacity)

    @TempDir
    Path work;

    /** The policy as {@code overlay} with {@code components/report-node-capacity} renders it. */
    private CompiledPolicy withNodeCapacity(String overlay) throws IOException, InterruptedException {
        Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        return compile(policyIn(RenderedManifests.kustomize(work.resolve(overlay.replace('/', '-')),
                List.of(overlay, "components/report-node-capacity"), null), OWN_NODE_POLICY));
    }

    private static final Map<String, Object> REPORTED = Map.of("nvidia.com/gpumem", "46068",
            "nvidia.com/gpucores", "200");

    @Test
    void reportNodeCapacityAllowsExactlyGpumemAndGpucoresOnTheOwnNode() throws Exception {
        CompiledPolicy policy = withNodeCapacity("overlays/real-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        Map<String, Object> reported = node("worker-1", ANNOTATIONS, LABELS, capacityWith(REPORTED));
        // Added, lowered (a GPU turned unhealthy), removed.
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before, reported)).denials()).isEmpty();
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", reported, node("worker-1", ANNOTATIONS,
                LABELS, capacityWith(Map.of("nvidia.com/gpumem", "23034", "nvidia.com/gpucores", "100"))))).denials())
                .isEmpty();
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", reported, before)).denials()).isEmpty();
    }

    @Test
    void reportNodeCapacityAllowsNothingWider() throws Exception {
        CompiledPolicy policy = withNodeCapacity("overlays/real-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        // Another extended resource, the ones mock capacity would allow among them, and a node resource.
        for (String other : List.of("nvidia.com/gpu", "nvidia.com/gpumem-percentage", "example.com/vram",
                "hygon.com/dcumem", "huawei.com/Ascend910B4", "cpu")) {
            Map<String, Object> written = node("worker-1", ANNOTATIONS, LABELS,
                    capacityWith(with(new LinkedHashMap<>(REPORTED), other, "1")));
            assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before, written)).denials())
                    .as(other).containsExactly("the agent may change only the capacity/allocatable of nvidia.com/gpumem,"
                            + " nvidia.com/gpucores, not " + other + ", " + other);
        }
        // The two resources on another node.
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", node("worker-2", ANNOTATIONS, LABELS,
                CAPACITY), node("worker-2", ANNOTATIONS, LABELS, capacityWith(REPORTED)))).denials())
                .containsExactly("the agent on node worker-1 may write only its own Node, not worker-2");
        // The rest of the status stays the kubelet's.
        Map<String, Object> reported = node("worker-1", ANNOTATIONS, LABELS, capacityWith(REPORTED));
        @SuppressWarnings("unchecked")
        Map<String, Object> status = new LinkedHashMap<>((Map<String, Object>) reported.get("status"));
        status.put("conditions", List.of(Map.of("type", "Ready", "status", "False")));
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before, with(reported, "status",
                status))).denials()).containsExactly("the agent may not change its Node's conditions, addresses,"
                + " kubelet endpoint or node info");
        // The main resource still allows only HAMi's annotations; a token without the node name writes nothing.
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-1", "example.com/x", "1"))
                .denials()).hasSize(1);
        assertThat(admit(policy, update(AGENT, NO_NODE_NAME, "status", before, reported)).denials()).singleElement()
                .asString().contains(NODE_NAME_KEY);
    }

    @Test
    void withoutTheComponentTheReportedResourcesAreDenied() throws Exception {
        for (CompiledPolicy policy : List.of(basePolicy(), rendered("overlays/real-gpus"))) {
            assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status",
                    node("worker-1", ANNOTATIONS, LABELS, CAPACITY),
                    node("worker-1", ANNOTATIONS, LABELS, capacityWith(REPORTED)))).denials()).singleElement()
                    .asString().startsWith("the agent writes Node status only with mock capacity")
                    .contains("--report-node-capacity");
        }
    }

    @Test
    void mockCapacityAndTheReportTogetherAllowBothLists() throws Exception {
        CompiledPolicy policy = withNodeCapacity("overlays/simulated-gpus");
        Map<String, Object> before = node("worker-1", ANNOTATIONS, LABELS, CAPACITY);
        Map<String, Object> gpus = capacityWith(Map.of("nvidia.com/gpu", "10", "nvidia.com/gpumem", "81920",
                "nvidia.com/gpucores", "100", "nvidia.com/gpumem-percentage", "100"));
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, gpus))).denials()).isEmpty();
        assertThat(admit(policy, update(AGENT, List.of("worker-1"), "status", before,
                node("worker-1", ANNOTATIONS, LABELS, with(gpus, "example.com/vram", "1")))).denials())
                .singleElement().asString().startsWith("the agent may change only the capacity/allocatable of"
                        + " nvidia.com/gpu, ").contains("huawei.com/Ascend*), nvidia.com/gpumem, nvidia.com/gpucores,"
                        + " not example.com/vram");
    }

    @Test
    void kamajiMatchesKamajisServiceAccount() throws Exception {
        CompiledPolicy policy = rendered("overlays/kamaji");
        String kamaji = "system:serviceaccount:kube-system:konnectivity-agent";
        assertThat(admit(policy, annotationPatch(kamaji, List.of("worker-1"), "worker-1", "hami.io/node-handshake",
                "Reported 2026-12-01 08:00:05"))).isEqualTo(new Outcome(true, List.of()));
        assertThat(admit(policy, annotationPatch(kamaji, List.of("worker-1"), "worker-2", "hami.io/node-handshake",
                "x")).denials()).hasSize(1);
        assertThat(admit(policy, annotationPatch(AGENT, List.of("worker-1"), "worker-2", "example.com/x", "1"))
                .matched()).isFalse();
    }
}
