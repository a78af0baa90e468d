package io.tenantgateway.agent.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.Parts;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * What the manifest tests share: parsing rendered YAML (kustomize's or Helm's) into fabric8 objects, the agent's
 * arguments as the kubelet expands them, the permissions the bound ClusterRoles grant, and the permissions the
 * agent's flags use ({@link KubernetesPermissions}, through the real flag mapping). Stateless; any thread.
 */
public final class RenderedManifests {
    /** The repository root (tests run in the agent module). */
    public static final Path REPOSITORY = Path.of(System.getProperty("user.dir")).resolve("..").normalize();
    public static final Path MANIFESTS = REPOSITORY.resolve("manifests");
    public static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    /** Kamaji's own konnectivity-agent arguments, before the TenantControlPlane's extraArgs. */
    public static final List<String> KAMAJI_AGENT_ARGS = List.of("run", "-v=8", "--logtostderr=true",
            "--ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
            "--proxy-server-host=tenant-a.example.com", "--proxy-server-port=8132", "--admin-server-port=8133",
            "--health-server-port=8134",
            "--service-account-token-path=/var/run/secrets/tokens/konnectivity-agent-token");

    private RenderedManifests() {
    }

    /** Every object in a multi-document YAML stream; documents holding only comments are skipped. */
    public static List<HasMetadata> parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (!document.isBlank()) {
                HasMetadata object = SERIALIZATION.unmarshal(document);
                if (object != null) {
                    objects.add(object);
                }
            }
        }
        return objects;
    }

    /** The one object of {@code type}. */
    public static <T> T only(List<HasMetadata> objects, Class<T> type) {
        List<T> matches = objects.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(matches).as(type.getSimpleName()).hasSize(1);
        return matches.get(0);
    }

    /** Arguments as the kubelet passes them: $(VAR) references expanded from {@code values}. */
    public static List<String> expandedArgs(Container container, Map<String, String> values) {
        return container.getArgs().stream().map(arg -> {
            String expanded = arg;
            for (Map.Entry<String, String> value : values.entrySet()) {
                expanded = expanded.replace("$(" + value.getKey() + ")", value.getValue());
            }
            return expanded;
        }).toList();
    }

    /**
     * The permission keys ({@code group/resource:verb}) the ClusterRoles bound to {@code account} grant, and the
     * Roles bound to it (the Secret create and update of {@code components/webhook-tls-self-managed}, in the
     * Secret's namespace: kube-system in manifests/, the release namespace in the chart), each in its binding's
     * namespace.
     */
    public static Set<String> granted(List<HasMetadata> objects, String account) {
        Set<String> roles = new TreeSet<>();
        objects.stream().filter(ClusterRoleBinding.class::isInstance).map(ClusterRoleBinding.class::cast)
                .filter(b -> b.getSubjects().stream().anyMatch(subject -> account.equals(
                        "system:serviceaccount:" + subject.getNamespace() + ":" + subject.getName())))
                .forEach(b -> roles.add(b.getRoleRef().getName()));
        Set<String> namespacedRoles = new TreeSet<>(); // namespace/name
        objects.stream().filter(RoleBinding.class::isInstance).map(RoleBinding.class::cast)
                .filter(b -> b.getSubjects().stream().anyMatch(subject -> account.equals(
                        "system:serviceaccount:" + subject.getNamespace() + ":" + subject.getName())))
                .forEach(b -> {
                    assertThat(b.getMetadata().getNamespace()).as("RoleBinding namespace").isNotBlank();
                    assertThat(b.getRoleRef().getKind()).isEqualTo("Role");
                    namespacedRoles.add(b.getMetadata().getNamespace() + "/" + b.getRoleRef().getName());
                });
        Set<String> granted = new TreeSet<>();
        objects.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast)
                .filter(role -> roles.contains(role.getMetadata().getName()))
                .forEach(role -> role.getRules().forEach(rule -> addKeys(granted, rule)));
        objects.stream().filter(Role.class::isInstance).map(Role.class::cast)
                .filter(role -> namespacedRoles.contains(role.getMetadata().getNamespace() + "/"
                        + role.getMetadata().getName()))
                .forEach(role -> role.getRules().forEach(rule -> addKeys(granted, rule)));
        assertThat(roles).as("ClusterRoles bound to " + account).isNotEmpty();
        return granted;
    }

    private static void addKeys(Set<String> granted, PolicyRule rule) {
        rule.getApiGroups().forEach(group -> rule.getResources().forEach(resource -> rule.getVerbs().forEach(verb ->
                granted.add((group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb))));
    }

    /** The permission keys {@link KubernetesPermissions} declares for {@code uses}. */
    public static Set<String> declared(Set<Use> uses) {
        return KubernetesPermissions.keys(KubernetesPermissions.needed(uses));
    }

    /**
     * What {@code run} with these arguments ({@code args.get(0)} is {@code run}) does with the API, through the real
     * parsing and mapping ({@link AgentCommand#parse}, {@code toConfig}), with the files of {@link #withStandIns}.
     *
     * @param noNodeNameEnv whether the pod has no {@code NODE_NAME} (Kamaji's DaemonSet): the agent then reads its
     *     node from its own pod, as {@code run} does, when an enabled part needs the name
     */
    public static Set<Use> uses(Path standIns, List<String> args, boolean noNodeNameEnv, Map<String, String> mounted)
            throws IOException {
        AgentConfig config = AgentCommand.parse(withStandIns(standIns, args, mounted).toArray(String[]::new))
                .toConfig();
        return config.apiUses(noNodeNameEnv && Parts.enabled(config).stream()
                .anyMatch(part -> part.plan().needsNodeName()));
    }

    /**
     * {@code args} after {@code run}, as the agent in its pod would see its files: every absolute file argument
     * points at a stand-in under {@code standIns} holding what {@code mounted} gives for that path (a ConfigMap the
     * pod mounts), else an empty file, or a directory for {@code --*-dir} flags. {@code --node-name} is added: what
     * the kubelet's {@code NODE_NAME} or the agent's own pod would give.
     */
    public static List<String> withStandIns(Path standIns, List<String> args, Map<String, String> mounted)
            throws IOException {
        assertThat(args.get(0)).isEqualTo("run");
        List<String> withFiles = new ArrayList<>();
        for (String arg : args.subList(1, args.size())) {
            int equals = arg.indexOf('=');
            if (arg.startsWith("--") && equals > 0 && arg.startsWith("/", equals + 1)) {
                String flag = arg.substring(0, equals);
                String path = arg.substring(equals + 1);
                Path standIn = standIns.resolve(path.substring(1));
                if (flag.endsWith("-dir")) {
                    Files.createDirectories(standIn);
                } else if (!Files.exists(standIn)) {
                    Files.createDirectories(standIn.getParent());
                    Files.writeString(standIn, mounted.getOrDefault(path, ""));
                }
                withFiles.add(flag + "=" + standIn);
            } else {
                withFiles.add(arg);
            }
        }
        withFiles.add("--node-name=worker-1");
        return withFiles;
    }

    /** Whether {@code kubectl} (which renders kustomize) is installed. */
    public static boolean kubectl() {
        return JarProcess.onPath("kubectl");
    }

    /**
     * {@code kubectl kustomize} of {@code dirs} under manifests/ (a resource, then components), wrapped in a
     * kustomization written to {@code root} (kustomize takes relative paths only), with {@code daemonSetPatch} (JSON
     * patch) applied to the DaemonSet when not null.
     */
    public static String kustomize(Path root, List<String> dirs, String daemonSetPatch)
            throws IOException, InterruptedException {
        Files.createDirectories(root);
        StringBuilder kustomization = new StringBuilder("apiVersion: kustomize.config.k8s.io/v1beta1\n"
                + "kind: Kustomization\nresources:\n  - " + relative(root, dirs.get(0)) + "\n");
        if (dirs.size() > 1) {
            kustomization.append("components:\n");
            dirs.subList(1, dirs.size()).forEach(d -> kustomization.append("  - ").append(relative(root, d))
                    .append('\n'));
        }
        if (daemonSetPatch != null) {
            kustomization.append("patches:\n  - target: {kind: DaemonSet, name: tenant-gateway}\n    patch: |-\n")
                    .append(daemonSetPatch.indent(6));
        }
        Files.writeString(root.resolve("kustomization.yaml"), kustomization);
        return kustomize(root);
    }

    private static String relative(Path root, String manifestsDir) {
        return root.toAbsolutePath().relativize(MANIFESTS.resolve(manifestsDir).toAbsolutePath()).toString();
    }

    /** {@code kubectl kustomize DIR}. */
    public static String kustomize(Path dir) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("kubectl", "kustomize", dir.toString()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    /** Objects made for a consumer outside the rendering, by kind and name: the dashboard ConfigMap is Grafana's. */
    private static final Set<String> CONSUMED_OUTSIDE = Set.of("ConfigMap/tenant-gateway-dashboard");
    /** What a rendering installs for its own sake: the workload, the bindings, the webhook, the monitor, the cert. */
    private static final Set<String> TOP_LEVEL = Set.of("DaemonSet", "ClusterRoleBinding", "RoleBinding",
            "ValidatingAdmissionPolicyBinding", "MutatingWebhookConfiguration", "ServiceMonitor", "Certificate");

    /**
     * The objects of one rendering (kustomize's or the chart's) that nothing in it uses, each as
     * {@code Kind namespace/name}: a ConfigMap no pod template mounts or reads, a ServiceAccount no pod runs as, a
     * (Cluster)Role no binding grants, a ValidatingAdmissionPolicy no binding binds, a Service neither the webhook
     * configuration calls nor a ServiceMonitor selects, an Issuer no Certificate names, and any kind this does not know.
     * {@link #TOP_LEVEL} kinds are used by being there; {@link #CONSUMED_OUTSIDE} objects are for someone else.
     */
    public static List<String> unused(List<HasMetadata> objects) {
        List<Map<String, Object>> trees = objects.stream().map(RenderedManifests::tree).toList();
        Set<String> used = new TreeSet<>(); // Kind/namespace/name
        for (Map<String, Object> tree : trees) {
            String kind = (String) tree.get("kind");
            String namespace = Objects.toString(at(tree, "metadata", "namespace"), "");
            switch (kind) {
                case "DaemonSet" -> {
                    Object pod = at(tree, "spec", "template", "spec");
                    used.add("ServiceAccount/" + namespace + "/" + at(pod, "serviceAccountName"));
                    for (Object volume : list(at(pod, "volumes"))) {
                        addIfSet(used, "ConfigMap/" + namespace + "/", at(volume, "configMap", "name"));
                        for (Object source : list(at(volume, "projected", "sources"))) {
                            addIfSet(used, "ConfigMap/" + namespace + "/", at(source, "configMap", "name"));
                        }
                    }
                    List<Object> containers = new ArrayList<>(list(at(pod, "containers")));
                    containers.addAll(list(at(pod, "initContainers")));
                    for (Object container : containers) {
                        for (Object env : list(at(container, "env"))) {
                            addIfSet(used, "ConfigMap/" + namespace + "/",
                                    at(env, "valueFrom", "configMapKeyRef", "name"));
                        }
                        for (Object env : list(at(container, "envFrom"))) {
                            addIfSet(used, "ConfigMap/" + namespace + "/", at(env, "configMapRef", "name"));
                        }
                    }
                }
                case "ClusterRoleBinding", "RoleBinding" -> {
                    String roleKind = (String) at(tree, "roleRef", "kind");
                    used.add(roleKind + "/" + (roleKind.equals("Role") ? namespace : "") + "/"
                            + at(tree, "roleRef", "name"));
                }
                case "ValidatingAdmissionPolicyBinding" ->
                        used.add("ValidatingAdmissionPolicy//" + at(tree, "spec", "policyName"));
                case "MutatingWebhookConfiguration" -> {
                    for (Object webhook : list(tree.get("webhooks"))) {
                        Object service = at(webhook, "clientConfig", "service");
                        if (service != null) {
                            used.add("Service/" + at(service, "namespace") + "/" + at(service, "name"));
                        }
                    }
                }
                case "ServiceMonitor" -> {
                    Object selector = at(tree, "spec", "selector", "matchLabels");
                    List<Object> namespaces = list(at(tree, "spec", "namespaceSelector", "matchNames"));
                    for (Map<String, Object> candidate : trees) {
                        Object labels = at(candidate, "metadata", "labels");
                        if ("Service".equals(candidate.get("kind")) && selector instanceof Map<?, ?> wanted
                                && labels instanceof Map<?, ?> has && has.entrySet().containsAll(wanted.entrySet())
                                && (namespaces.isEmpty() || namespaces.contains(at(candidate, "metadata",
                                "namespace")))) {
                            used.add("Service/" + at(candidate, "metadata", "namespace") + "/"
                                    + at(candidate, "metadata", "name"));
                        }
                    }
                }
                case "Certificate" -> used.add(at(tree, "spec", "issuerRef", "kind") + "/"
                        + ("Issuer".equals(at(tree, "spec", "issuerRef", "kind")) ? namespace : "") + "/"
                        + at(tree, "spec", "issuerRef", "name"));
                default -> {
                }
            }
        }
        List<String> unused = new ArrayList<>();
        for (Map<String, Object> tree : trees) {
            String kind = (String) tree.get("kind");
            String name = (String) at(tree, "metadata", "name");
            String namespace = Objects.toString(at(tree, "metadata", "namespace"), "");
            if (TOP_LEVEL.contains(kind) || CONSUMED_OUTSIDE.contains(kind + "/" + name)
                    || used.contains(kind + "/" + namespace + "/" + name)) {
                continue;
            }
            unused.add(kind + " " + (namespace.isEmpty() ? "" : namespace + "/") + name);
        }
        return unused;
    }

    /** {@code object} as YAML's maps and lists. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> tree(HasMetadata object) {
        return SERIALIZATION.convertValue(object, Map.class);
    }

    /** The value at {@code keys} under {@code tree}, or null where a step is missing or not a map. */
    private static Object at(Object tree, String... keys) {
        Object at = tree;
        for (String key : keys) {
            if (!(at instanceof Map<?, ?> map)) {
                return null;
            }
            at = map.get(key);
        }
        return at;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value) {
        return value instanceof List<?> list ? (List<Object>) list : List.of();
    }

    private static void addIfSet(Set<String> used, String prefix, Object name) {
        if (name != null) {
            used.add(prefix + name);
        }
    }
}
