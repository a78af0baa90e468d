package io.tenantgateway.agent;

import io.tenantgateway.agent.webhook.WebhookSettings;
import static io.tenantgateway.agent.testing.RenderedManifests.SERIALIZATION;
import static io.tenantgateway.agent.testing.RenderedManifests.declared;
import static io.tenantgateway.agent.testing.RenderedManifests.granted;
import static io.tenantgateway.agent.testing.RenderedManifests.only;
import static io.tenantgateway.agent.testing.RenderedManifests.parse;
import static io.tenantgateway.agent.testing.RenderedManifests.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.testing.RenderedManifests;
import io.tenantgateway.agent.webhook.WebhookCertificatesConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code charts/tenant-gateway} through Helm's own library (helm-java: Helm's Go packages behind JNA): {@code lint
 * --strict} and {@code template} for the defaults and every documented mode ({@code ci/*-values.yaml}); the rendered
 * agent arguments parse with the real CLI; the ClusterRoles grant exactly the {@code KubernetesPermissions} those
 * arguments use; and where a ci file names its kustomize counterpart ({@value #SAME_AS}...), the chart renders the
 * same objects as {@code kubectl kustomize}, compared as parsed objects after {@link #normalizedChart} and
 * {@link #normalizedKustomize} remove what must differ, and nothing else (standalone self-managed certificates:
 * against the base with both certificate components and the README's DaemonSet change,
 * {@link #SELF_MANAGED_DAEMONSET_PATCH}).
 */
class HelmChartTest {
    private static final Path CHART = RenderedManifests.REPOSITORY.resolve("charts/tenant-gateway");
    private static final String NAMESPACE = "kube-system";
    private static final String RELEASE = "tenant-gateway";
    private static final String STANDALONE_ACCOUNT = "system:serviceaccount:kube-system:tenant-gateway";
    private static final String KAMAJI_ACCOUNT = "system:serviceaccount:kube-system:konnectivity-agent";
    private static final String NODE_ACCOUNT = "system:serviceaccount:kube-system:tenant-gateway-node";
    /** One instance: the native library loads once per JVM; each command is independent. */
    private static final Helm HELM = new Helm(CHART);
    /** The line of a ci values file that names the kustomize rendering with the same objects. */
    static final String SAME_AS = "# same objects as kustomize: ";

    // What must differ between the chart and kustomize. Nothing else is normalized.
    /** Helm's standard labels; the chart's other labels are the kustomize base's. */
    static final List<String> HELM_LABELS = List.of("helm.sh/chart", "app.kubernetes.io/managed-by",
            "app.kubernetes.io/instance", "app.kubernetes.io/version");
    /** The chart rolls the pods on a konnectivity-server change with this pod annotation, kustomize with a hash. */
    static final String CONFIG_CHECKSUM = "checksum/config";
    /** kustomize's configMapGenerator name: NAME-HASH, 10 characters of kustomize's hash alphabet. */
    static final Pattern GENERATED_NAME = Pattern.compile("(tenant-gateway)-[2456789bcdfghkmt]{10}");

    @TempDir
    Path temp;

    /** The chart's defaults, or one {@code ci/*-values.yaml}. */
    record Mode(String name, Path values) {
        static final Mode DEFAULTS = new Mode("defaults", null);

        static Mode ci(String file) {
            return new Mode(file, CHART.resolve("ci").resolve(file));
        }

        /** Directories under manifests/ (a resource, then components) that render the same objects, or null. */
        String sameAs() throws IOException {
            if (values == null) {
                return "base";
            }
            return Files.readAllLines(values).stream().filter(line -> line.startsWith(SAME_AS)).findFirst()
                    .map(line -> line.substring(SAME_AS.length()).replaceAll("\\(.*\\)", "").strip()).orElse(null);
        }

        boolean kamaji() {
            return "kamaji".equals(effectiveValues(this).get("mode"));
        }

        /** The agents this mode runs: the permission table's rows ({@link AgentRole}). */
        @SuppressWarnings("unchecked")
        List<AgentRole> roles() {
            if (!kamaji()) {
                return List.of(AgentRole.STANDALONE);
            }
            Map<String, Object> devices = (Map<String, Object>) effectiveValues(this).get("devices");
            return "none".equals(devices.get("source")) ? List.of(AgentRole.KAMAJI_AGENT)
                    : List.of(AgentRole.KAMAJI_AGENT, AgentRole.NODE);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * Who runs the agent, and as whom: per mode ({@link Mode#roles}) one row per role, whose bound ClusterRoles and
     * Roles must grant exactly what its arguments use ({@code KubernetesPermissions}), and nothing is bound to anyone
     * else. Standalone: our DaemonSet. Under Kamaji: Kamaji's agent (its own arguments and the patch's, no
     * {@code NODE_NAME}), and with devices on the node role, our DaemonSet {@code tenant-gateway-node}
     * ({@code --tunnel=false}).
     */
    enum AgentRole {
        STANDALONE(STANDALONE_ACCOUNT, false),
        KAMAJI_AGENT(KAMAJI_ACCOUNT, true),
        NODE(NODE_ACCOUNT, false);

        final String account;
        /** Kamaji's DaemonSet has no NODE_NAME: the agent reads its node from its own pod. */
        final boolean nodeNameFromApi;

        AgentRole(String account, boolean nodeNameFromApi) {
            this.account = account;
            this.nodeNameFromApi = nodeNameFromApi;
        }

        /** This role's full {@code run} arguments in {@code objects}, a rendering of {@code mode}. */
        List<String> args(Mode mode, List<HasMetadata> objects) {
            return this == NODE ? nodeArgs(objects) : agentArgs(mode, objects);
        }
    }

    static Stream<Mode> modes() throws IOException {
        try (Stream<Path> files = Files.list(CHART.resolve("ci"))) {
            List<Mode> modes = new ArrayList<>(List.of(Mode.DEFAULTS));
            files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith("-values.yaml")).sorted()
                    .forEach(f -> modes.add(Mode.ci(f)));
            return modes.stream();
        }
    }

    private static String template(Mode mode) {
        return template(mode, NAMESPACE, Map.of());
    }

    private static String template(Mode mode, String namespace, Map<String, Object> set) {
        TemplateCommand command = HELM.template().withName(RELEASE).withNamespace(namespace);
        if (mode.values() != null) {
            command = command.withValuesFile(mode.values());
        }
        for (Map.Entry<String, Object> value : set.entrySet()) {
            command = command.set(value.getKey(), value.getValue());
        }
        return command.call();
    }

    /** NOTES.txt as {@code helm install --dry-run} (client only) prints it. */
    private static String notes(Mode mode) {
        return notes(mode, Map.of());
    }

    private static String notes(Mode mode, Map<String, Object> set) {
        InstallCommand install = HELM.install().withName(RELEASE).withNamespace(NAMESPACE).dryRun().clientOnly();
        if (mode.values() != null) {
            install = install.withValuesFile(mode.values());
        }
        for (Map.Entry<String, Object> value : set.entrySet()) {
            install = install.set(value.getKey(), value.getValue());
        }
        String output = install.call().getOutput();
        assertThat(output).contains("NOTES:");
        return output.substring(output.indexOf("NOTES:"));
    }

    /** The TenantControlPlane patch NOTES.txt prints under mode=kamaji: header line to "# end of patch". */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> kamajiPatch(String notes) {
        Matcher header = Pattern.compile("\n# tenant-gateway \\S+: TenantControlPlane patch\n").matcher(notes);
        assertThat(header.find()).as(notes).isTrue();
        int end = notes.indexOf("# end of patch");
        assertThat(end).as(notes).isGreaterThan(header.end());
        return SERIALIZATION.unmarshal(notes.substring(header.end(), end), Map.class);
    }

    /** spec.addons.konnectivity.agent of the TenantControlPlane patch NOTES.txt prints under mode=kamaji. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> kamajiAgentPatch(Mode mode) {
        return (Map<String, Object>) path(kamajiPatch(notes(mode)), "spec", "addons", "konnectivity", "agent");
    }

    @SuppressWarnings("unchecked")
    private static Object path(Map<String, Object> tree, String... keys) {
        Object at = tree;
        for (String key : keys) {
            assertThat(at).as(String.join(".", keys)).isInstanceOf(Map.class);
            at = ((Map<String, Object>) at).get(key);
        }
        return at;
    }

    // --- values: Helm's coalescing (maps merge, anything else replaces, null deletes) --------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Object> yaml(Path file) {
        try {
            Map<String, Object> values = SERIALIZATION.unmarshal(Files.readString(file), Map.class);
            return values == null ? new LinkedHashMap<>() : values;
        } catch (IOException e) {
            throw new IllegalStateException(file.toString(), e);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> coalesce(Map<String, Object> defaults, Map<String, Object> override) {
        Map<String, Object> merged = new LinkedHashMap<>(defaults);
        override.forEach((key, value) -> {
            if (value == null) {
                merged.remove(key);
            } else if (value instanceof Map && merged.get(key) instanceof Map) {
                merged.put(key, coalesce((Map<String, Object>) merged.get(key), (Map<String, Object>) value));
            } else {
                merged.put(key, value);
            }
        });
        return merged;
    }

    private static Map<String, Object> effectiveValues(Mode mode) {
        Map<String, Object> defaults = yaml(CHART.resolve("values.yaml"));
        return mode.values() == null ? defaults : coalesce(defaults, yaml(mode.values()));
    }

    /**
     * A copy of the chart whose values.yaml is the mode's values over the defaults, as {@code helm lint -f FILE}
     * merges them (helm-java's lint takes no values files).
     */
    private Path chartWith(Mode mode) throws IOException {
        Path copy = temp.resolve(mode.name()).resolve("tenant-gateway");
        try (Stream<Path> files = Files.walk(CHART)) {
            for (Path file : files.toList()) {
                Path target = copy.resolve(CHART.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target); // follows the dashboard link, as Helm's loader does
                }
            }
        }
        Files.writeString(copy.resolve("values.yaml"), SERIALIZATION.asYaml(effectiveValues(mode)));
        return copy;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("modes")
    void lintStrictPasses(Mode mode) throws IOException {
        Path chart = mode.values() == null ? CHART : chartWith(mode);
        LintResult result = new Helm(chart).lint().strict().call();
        assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
        // Lint only logs a template's fail() (as INFO, outside these messages) and stops rendering; the template
        // test renders the same values and fails on it.
        assertThat(result.getMessages()).as("lint messages").noneMatch(m -> m.startsWith("[WARNING]")
                || m.startsWith("[ERROR]"));
    }

    // --- the agent's arguments ---------------------------------------------------------------------------------

    /** The agent's full {@code run} arguments: the DaemonSet's (expanded), or Kamaji's own plus the patch's. */
    @SuppressWarnings("unchecked")
    private static List<String> agentArgs(Mode mode, List<HasMetadata> objects) {
        if (mode.kamaji()) {
            List<String> args = new ArrayList<>(RenderedManifests.KAMAJI_AGENT_ARGS);
            args.addAll((List<String>) kamajiAgentPatch(mode).get("extraArgs"));
            return args;
        }
        ConfigMap config = objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .filter(c -> c.getMetadata().getName().equals("tenant-gateway")).findFirst().orElseThrow();
        Container container = container(objects);
        return RenderedManifests.expandedArgs(container, Map.of(
                "PROXY_SERVER_HOST", config.getData().get("proxy-server-host"),
                "PROXY_SERVER_PORT", config.getData().get("proxy-server-port")));
    }

    private static Container container(List<HasMetadata> objects) {
        return only(objects, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    /** The node role's arguments: its DaemonSet's, which reference no variable. */
    private static List<String> nodeArgs(List<HasMetadata> objects) {
        DaemonSet node = only(objects, DaemonSet.class);
        assertThat(node.getMetadata().getName()).isEqualTo("tenant-gateway-node");
        return node.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
    }

    /** The files the DaemonSet's ConfigMap volumes put into the container: path → content. */
    private static Map<String, String> mountedFiles(List<HasMetadata> objects) {
        Map<String, String> files = new HashMap<>();
        if (objects.stream().noneMatch(DaemonSet.class::isInstance)) {
            return files;
        }
        var pod = only(objects, DaemonSet.class).getSpec().getTemplate().getSpec();
        for (VolumeMount mount : pod.getContainers().get(0).getVolumeMounts()) {
            Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError("no volume " + mount.getName()));
            if (volume.getConfigMap() != null) {
                ConfigMap map = objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                        .filter(c -> c.getMetadata().getName().equals(volume.getConfigMap().getName())).findFirst()
                        .orElseThrow(() -> new AssertionError("no ConfigMap " + volume.getConfigMap().getName()));
                map.getData().forEach((key, content) -> files.put(mount.getMountPath() + "/" + key, content));
            }
        }
        return files;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("modes")
    void templateRendersObjectsWhoseAgentArgumentsTheCliAccepts(Mode mode) throws IOException {
        List<HasMetadata> objects = parse(template(mode));
        assertThat(objects).extracting(HasMetadata::getKind).contains("ClusterRole", "ClusterRoleBinding",
                "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
        for (HasMetadata object : objects) {
            assertThat(object.getMetadata().getLabels()).as(object.getKind()).containsKeys(HELM_LABELS.toArray(
                    String[]::new)).containsEntry("app.kubernetes.io/name", "tenant-gateway");
        }
        if (mode.roles().contains(AgentRole.NODE)) {
            // Under Kamaji with devices on, the node role is ours: its DaemonSet and account, nothing else.
            assertThat(objects).filteredOn(o -> o instanceof DaemonSet || o instanceof ServiceAccount)
                    .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
                    .containsExactlyInAnyOrder("DaemonSet/tenant-gateway-node", "ServiceAccount/tenant-gateway-node");
        } else if (mode.kamaji()) {
            assertThat(objects).noneMatch(o -> o instanceof DaemonSet || o instanceof ServiceAccount);
        }
        if (!mode.roles().contains(AgentRole.KAMAJI_AGENT) || mode.roles().contains(AgentRole.NODE)) {
            assertThat(container(objects).getEnv()).anySatisfy(env -> assertThat(env.getName())
                    .isEqualTo("NODE_NAME"));
        }
        for (AgentRole role : mode.roles()) {
            List<String> args = role.args(mode, objects);
            // A flag the CLI does not know, or a bad value, fails here as it fails `run` (exit 2).
            Map<String, String> mounted = role == AgentRole.KAMAJI_AGENT ? Map.of() : mountedFiles(objects);
            AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp.resolve(role.name()), args,
                    mounted).toArray(String[]::new)).toConfig();
            assertThat(config.tunnel().isEmpty()).as(role.name()).isEqualTo(role == AgentRole.NODE);
            if (mode.roles().contains(AgentRole.NODE)) {
                // Every node part in the node role, none in Kamaji's agent; the webhook in Kamaji's agent alone.
                assertThat(config.devices().isPresent()).as(role.name()).isEqualTo(role == AgentRole.NODE);
                assertThat(config.webhook().isPresent()).as(role.name()).isEqualTo(role == AgentRole.KAMAJI_AGENT);
                if (role == AgentRole.KAMAJI_AGENT) {
                    assertThat(config.allocation()).isEmpty();
                    assertThat(config.devicePlugin()).isEmpty();
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("modes")
    void clusterRolesGrantExactlyWhatTheAgentsFlagsUse(Mode mode) throws IOException {
        List<HasMetadata> objects = parse(template(mode));
        Map<AgentRole, Set<String>> granted = new java.util.EnumMap<>(AgentRole.class);
        for (AgentRole role : mode.roles()) {
            Set<Use> uses = RenderedManifests.uses(temp.resolve(role.name()), role.args(mode, objects),
                    role.nodeNameFromApi, role == AgentRole.KAMAJI_AGENT ? Map.of() : mountedFiles(objects));
            granted.put(role, granted(objects, role.account));
            assertThat(granted.get(role)).as("%s: granted (left) vs KubernetesPermissions for %s", role, uses)
                    .isEqualTo(declared(uses));
        }
        if (granted.containsKey(AgentRole.NODE)) {
            // Least privilege per role: the node role has nothing of the webhook's or the tunnel's, Kamaji's agent
            // reads no Node or pod by name and writes neither.
            assertThat(granted.get(AgentRole.NODE)).noneMatch(key -> key.startsWith("admissionregistration.k8s.io/")
                    || key.startsWith("core/secrets") || key.startsWith("core/configmaps")
                    || key.startsWith("core/resourcequotas") || key.startsWith("coordination.k8s.io/"));
            assertThat(granted.get(AgentRole.KAMAJI_AGENT)).doesNotContain("core/nodes:get", "core/nodes:patch",
                    "core/nodes/status:patch", "core/pods:get", "core/pods:patch");
        }
        // Every role is bound, each binding to one of the mode's accounts, and each account has a binding.
        Set<String> roles = new TreeSet<>();
        objects.stream().filter(ClusterRole.class::isInstance).forEach(r -> roles.add(r.getMetadata().getName()));
        Set<String> bound = new TreeSet<>();
        Set<String> subjects = new TreeSet<>();
        objects.stream().filter(ClusterRoleBinding.class::isInstance).map(ClusterRoleBinding.class::cast)
                .forEach(b -> {
                    assertThat(b.getSubjects()).hasSize(1);
                    bound.add(b.getRoleRef().getName());
                    subjects.add("system:serviceaccount:" + b.getSubjects().get(0).getNamespace() + ":"
                            + b.getSubjects().get(0).getName());
                });
        assertThat(bound).isEqualTo(roles);
        assertThat(subjects).containsExactlyInAnyOrderElementsOf(mode.roles().stream().map(r -> r.account).toList());
    }

    // --- the same objects as kustomize ------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("modes")
    void rendersTheSameObjectsAsKustomize(Mode mode) throws Exception {
        String sameAs = mode.sameAs();
        assumeTrue(sameAs != null, "no kustomize counterpart (no '" + SAME_AS + "' line)");
        assumeTrue(RenderedManifests.kubectl(), "kubectl renders kustomize");
        List<String> differences = kustomizeDifferences(List.of(sameAs.split("\\s+")), null, parse(template(mode)));
        assertThat(differences).as("chart (%s) vs kubectl kustomize %s, after removing %s, %s and %s",
                mode, sameAs, HELM_LABELS, CONFIG_CHECKSUM, GENERATED_NAME).isEmpty();
    }

    /**
     * What manifests/README.md ("Webhook certificates", self-managed) says to change in {@code base/}'s DaemonSet for
     * self-managed certificates, as a kustomize patch: {@code --webhook-tls-cert}/{@code --webhook-tls-key} become
     * {@code --webhook-tls-secret}/{@code --webhook-tls-self-managed=true}, and {@code --webhook-ca-bundle} and the
     * Secret volume go. The test ops fail kustomize loudly if the base's arguments or volumes move.
     */
    static final String SELF_MANAGED_DAEMONSET_PATCH = """
            - {op: test, path: /spec/template/spec/containers/0/args/10,
               value: --webhook-tls-cert=/etc/tenant-gateway/webhook/tls.crt}
            - {op: replace, path: /spec/template/spec/containers/0/args/10,
               value: --webhook-tls-secret=kube-system/tenant-gateway-webhook-tls}
            - {op: test, path: /spec/template/spec/containers/0/args/11,
               value: --webhook-tls-key=/etc/tenant-gateway/webhook/tls.key}
            - {op: replace, path: /spec/template/spec/containers/0/args/11, value: --webhook-tls-self-managed=true}
            - {op: test, path: /spec/template/spec/containers/0/args/12, value: --manage-webhook-config=true}
            - {op: test, path: /spec/template/spec/containers/0/args/13,
               value: --webhook-ca-bundle=/etc/tenant-gateway/webhook/ca.crt}
            - {op: remove, path: /spec/template/spec/containers/0/args/13}
            - {op: test, path: /spec/template/spec/containers/0/volumeMounts/1/name, value: webhook-tls}
            - {op: remove, path: /spec/template/spec/containers/0/volumeMounts/1}
            - {op: test, path: /spec/template/spec/volumes/1/name, value: webhook-tls}
            - {op: remove, path: /spec/template/spec/volumes/1}
            """;

    /**
     * Standalone self-managed certificates have no kustomize directory of their own: they are {@code base/} with
     * {@code components/webhook-tls-secret} and {@code components/webhook-tls-self-managed} and the README's
     * DaemonSet change ({@link #SELF_MANAGED_DAEMONSET_PATCH}); the chart renders exactly that, nothing normalized
     * beyond the usual list.
     */
    @Test
    void selfManagedStandaloneIsTheBaseWithBothComponentsAndTheReadmesDaemonSetChange() throws Exception {
        assumeTrue(RenderedManifests.kubectl(), "kubectl renders kustomize");
        List<String> dirs = List.of("base", "components/webhook-tls-secret", "components/webhook-tls-self-managed");
        List<HasMetadata> chart = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("webhook.certificates.mode",
                "self-managed")));
        assertThat(chart).extracting(HasMetadata::getKind).contains("Role", "RoleBinding");
        assertThat(kustomizeDifferences(dirs, SELF_MANAGED_DAEMONSET_PATCH, chart))
                .as("chart (webhook.certificates.mode=self-managed) vs kubectl kustomize %s + the README's DaemonSet"
                        + " change, after removing %s, %s and %s", dirs, HELM_LABELS, CONFIG_CHECKSUM, GENERATED_NAME)
                .isEmpty();
    }

    /**
     * {@code kubectl kustomize} of {@code dirs} (a resource, then components, under manifests/;
     * {@link RenderedManifests#kustomize(Path, List, String)}), with {@code daemonSetPatch} (JSON patch) applied to the
     * DaemonSet when not null, against {@code chartObjects}: one line per difference after the normalization.
     */
    private List<String> kustomizeDifferences(List<String> dirs, String daemonSetPatch, List<HasMetadata> chartObjects)
            throws IOException, InterruptedException {
        Map<String, Map<String, Object>> kustomize = normalizedKustomize(parse(RenderedManifests.kustomize(
                temp.resolve("kustomize"), dirs, daemonSetPatch)));
        Map<String, Map<String, Object>> chart = normalizedChart(chartObjects);
        List<String> differences = new ArrayList<>();
        for (String key : union(kustomize.keySet(), chart.keySet())) {
            if (!chart.containsKey(key)) {
                differences.add(key + ": only in kustomize");
            } else if (!kustomize.containsKey(key)) {
                differences.add(key + ": only in the chart");
            } else {
                diff(key + " ", kustomize.get(key), chart.get(key), differences);
            }
        }
        return differences;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }

    private static String key(Map<String, Object> tree) {
        Object namespace = path(tree, "metadata", "namespace");
        return tree.get("apiVersion") + " " + tree.get("kind") + " " + (namespace == null ? "" : namespace + "/")
                + path(tree, "metadata", "name");
    }

    /** The chart's objects without Helm's standard labels and the DaemonSet's {@link #CONFIG_CHECKSUM}. */
    @SuppressWarnings("unchecked")
    static Map<String, Map<String, Object>> normalizedChart(List<HasMetadata> objects) {
        Map<String, Map<String, Object>> byKey = new TreeMap<>();
        for (HasMetadata object : objects) {
            Map<String, Object> tree = tree(object);
            Map<String, Object> metadata = (Map<String, Object>) tree.get("metadata");
            Map<String, Object> labels = (Map<String, Object>) metadata.get("labels");
            HELM_LABELS.forEach(labels::remove);
            if (labels.isEmpty()) {
                metadata.remove("labels");
            }
            if (object instanceof DaemonSet) {
                Map<String, Object> pod = (Map<String, Object>) path(tree, "spec", "template", "metadata");
                Map<String, Object> annotations = (Map<String, Object>) pod.get("annotations");
                if (annotations != null) {
                    annotations.remove(CONFIG_CHECKSUM);
                }
                if (annotations != null && annotations.isEmpty()) {
                    pod.remove("annotations");
                }
            }
            assertThat(byKey.put(key(tree), tree)).as("twice: " + key(tree)).isNull();
        }
        return byKey;
    }

    /** kustomize's objects with generated names ({@link #GENERATED_NAME}) back to the generator's name. */
    static Map<String, Map<String, Object>> normalizedKustomize(List<HasMetadata> objects) {
        Map<String, String> generated = new HashMap<>();
        for (HasMetadata object : objects) {
            Matcher name = GENERATED_NAME.matcher(object.getMetadata().getName());
            if (object instanceof ConfigMap && name.matches()) {
                generated.put(name.group(), name.group(1));
            }
        }
        Map<String, Map<String, Object>> byKey = new TreeMap<>();
        for (HasMetadata object : objects) {
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = (Map<String, Object>) renamed(tree(object), generated);
            assertThat(byKey.put(key(tree), tree)).as("twice: " + key(tree)).isNull();
        }
        return byKey;
    }

    /** {@code value} with every string equal to a key of {@code names} replaced (the name and its references). */
    private static Object renamed(Object value, Map<String, String> names) {
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put(k, renamed(v, names)));
            return out;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(v -> renamed(v, names)).toList();
        }
        return value instanceof String s ? names.getOrDefault(s, s) : value;
    }

    /** One line per differing leaf: path, kustomize's value, the chart's value. */
    static void diff(String path, Object kustomize, Object chart, List<String> out) {
        if (kustomize instanceof Map<?, ?> k && chart instanceof Map<?, ?> c) {
            Set<String> keys = new TreeSet<>();
            k.keySet().forEach(key -> keys.add(key.toString()));
            c.keySet().forEach(key -> keys.add(key.toString()));
            keys.forEach(key -> diff(path + "." + key, k.get(key), c.get(key), out));
        } else if (kustomize instanceof List<?> k && chart instanceof List<?> c) {
            for (int i = 0; i < Math.max(k.size(), c.size()); i++) {
                diff(path + "[" + i + "]", i < k.size() ? k.get(i) : null, i < c.size() ? c.get(i) : null, out);
            }
        } else if (!Objects.equals(kustomize, chart)) {
            out.add(path + ": kustomize " + show(kustomize) + ", chart " + show(chart));
        }
    }

    private static String show(Object value) {
        return value == null ? "(absent)" : SERIALIZATION.asJson(value);
    }

    /**
     * The whole patch, its TENANT_CONTROL_PLANE_NAME placeholder included (no kamaji.tenantControlPlane set): Kamaji's
     * agent with every part, and beside the node role with the tunnel and the webhook only.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"kamaji-values.yaml, overlays/kamaji", "kamaji-node-values.yaml, overlays/kamaji-node"})
    @SuppressWarnings("unchecked")
    void kamajiNotesPrintTheOverlaysTenantControlPlanePatch(String values, String overlayDir) throws IOException {
        Map<String, Object> overlay = SERIALIZATION.unmarshal(Files.readString(RenderedManifests.MANIFESTS
                .resolve(overlayDir).resolve("tenantcontrolplane-patch.yaml")), Map.class);
        List<String> differences = new ArrayList<>();
        diff("patch", overlay, kamajiPatch(notes(Mode.ci(values))), differences);
        assertThat(differences).as("%s/tenantcontrolplane-patch.yaml vs the chart's NOTES", overlayDir).isEmpty();
    }

    /**
     * {@code kamaji.tenantControlPlane.name} and {@code .namespace} go wherever NOTES.txt names the TenantControlPlane
     * (the patch's metadata.name and the kubectl command); unset, both say what to set; a name that is not one is
     * refused by the schema.
     */
    @Test
    void kamajiNotesUseTheTenantControlPlanesNameAndNamespace() {
        Mode kamaji = Mode.ci("kamaji-values.yaml");
        String named = notes(kamaji, Map.of("kamaji.tenantControlPlane.name", "tenant-x",
                "kamaji.tenantControlPlane.namespace", "tenants"));
        assertThat(named).contains("\n  kubectl -n tenants patch tcp tenant-x --type merge --patch-file"
                + " tenantcontrolplane-patch.yaml\n").doesNotContain("TENANT_CONTROL_PLANE");
        assertThat(path(kamajiPatch(named), "metadata", "name")).isEqualTo("tenant-x");

        String unset = notes(kamaji);
        assertThat(unset).contains("\n  kubectl -n TENANT_CONTROL_PLANE_NAMESPACE patch tcp TENANT_CONTROL_PLANE_NAME"
                + " --type merge --patch-file tenantcontrolplane-patch.yaml\n")
                .contains("set\nkamaji.tenantControlPlane.name and kamaji.tenantControlPlane.namespace");
        assertThat(path(kamajiPatch(unset), "metadata", "name")).isEqualTo("TENANT_CONTROL_PLANE_NAME");

        assertThatThrownBy(() -> template(kamaji, NAMESPACE, Map.of("kamaji.tenantControlPlane.name", "Tenant_X")))
                .hasMessageContaining("kamaji.tenantControlPlane.name");
    }

    /**
     * {@code mode=kamaji} with devices on ({@code ci/kamaji-node-values.yaml}): the node role's DaemonSet runs
     * {@code run --tunnel=false} with device registration, the lock controller and the device plugin, with kubelet's
     * and HAMi-core's host paths, HAMi-core's init container and {@code NODE_NAME}, as its own account, which the
     * own-node policy matches; Kamaji's agent keeps the tunnel and the webhook ({@code --enable-lock-controller=false},
     * no device flag). {@code nodeRole.extraArgs} reach the node role only, {@code extraArgs} Kamaji's agent only; a
     * mock inventory file is the node role's to mount.
     */
    @Test
    @SuppressWarnings("unchecked")
    void kamajiWithDevicesRendersTheNodeRoleBesideKamajisAgent() throws IOException {
        Mode mode = Mode.ci("kamaji-node-values.yaml");
        List<HasMetadata> objects = parse(template(mode));
        DaemonSet node = only(objects, DaemonSet.class);
        var pod = node.getSpec().getTemplate().getSpec();
        assertThat(node.getMetadata().getName()).isEqualTo("tenant-gateway-node");
        assertThat(pod.getServiceAccountName()).isEqualTo("tenant-gateway-node");
        Container container = pod.getContainers().get(0);
        assertThat(container.getArgs()).startsWith("run").contains("--tunnel=false", "--enable-lock-controller=true",
                "--allocation-mode=device-plugin", "--device-plugin=true", "--device-source=nvidia-smi")
                .noneMatch(a -> a.startsWith("--proxy-server") || a.startsWith("--ca-cert")
                        || a.startsWith("--service-account-token-path") || a.startsWith("--webhook"));
        assertThat(container.getEnv()).extracting(e -> e.getName()).containsExactly("NODE_NAME",
                "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES");
        assertThat(pod.getVolumes()).filteredOn(v -> v.getHostPath() != null)
                .extracting(v -> v.getName() + "=" + v.getHostPath().getPath())
                .containsExactly("device-plugins=/var/lib/kubelet/device-plugins", "vgpu=/usr/local/vgpu",
                        "vgpulock=/tmp/vgpulock");
        assertThat(pod.getVolumes()).noneMatch(v -> v.getProjected() != null || v.getSecret() != null);
        assertThat(pod.getInitContainers()).singleElement().satisfies(init -> assertThat(init.getName())
                .isEqualTo("hami-core"));
        assertThat(pod.getSecurityContext().getRunAsUser()).isZero();
        assertThat(container.getPorts()).extracting(p -> p.getName()).containsExactly("health", "vgpu-monitor");

        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp.resolve("node"), nodeArgs(objects),
                mountedFiles(objects)).toArray(String[]::new)).toConfig();
        assertThat(config.tunnel()).isEmpty();
        assertThat(config.devicePlugin()).isPresent();
        assertThat(config.allocation().orElseThrow().mode()).isEqualTo(
                io.tenantgateway.agent.locks.AllocationMode.DEVICE_PLUGIN);
        assertThat(Parts.enabled(config)).extracting(part -> part.plan().name())
                .containsExactly("devices", "device-plugin", "lock-controller", "monitor");

        List<String> patch = (List<String>) kamajiAgentPatch(mode).get("extraArgs");
        assertThat(patch).contains("--webhook-tls-secret=kube-system/tenant-gateway-webhook-tls",
                "--enable-lock-controller=false").noneMatch(a -> a.startsWith("--device")
                        || a.startsWith("--allocation-mode") || a.startsWith("--mock"));
        assertThat(objects).filteredOn(ValidatingAdmissionPolicy.class::isInstance)
                .filteredOn(p -> p.getMetadata().getName().equals("tenant-gateway-own-node")).singleElement()
                .satisfies(p -> assertThat(((ValidatingAdmissionPolicy) p).getSpec().getMatchConditions().get(0)
                        .getExpression()).contains("'" + NODE_ACCOUNT + "'"));
        assertThat(notes(mode)).contains("kubectl -n kube-system rollout status daemonset/tenant-gateway-node");

        // The two extraArgs: each to its own agent.
        Map<String, Object> set = Map.of("extraArgs[0]", "--dial-timeout=3s", "nodeRole.extraArgs[0]",
                "--handshake-interval=10s");
        List<HasMetadata> extra = parse(template(mode, NAMESPACE, set));
        assertThat(nodeArgs(extra)).endsWith("--handshake-interval=10s").doesNotContain("--dial-timeout=3s");
        List<String> extraPatch = (List<String>) path(kamajiPatch(notes(mode, set)), "spec", "addons",
                "konnectivity", "agent", "extraArgs");
        assertThat(extraPatch).endsWith("--dial-timeout=3s").doesNotContain("--handshake-interval=10s");

        // Simulated GPUs from an inventory file: the node role mounts it and registers capacity.
        List<HasMetadata> inventory = parse(template(Mode.ci("kamaji-values.yaml"), NAMESPACE, Map.of(
                "devices.source", "mock", "devices.mock.inventory.devices[0].preset", "L4-24GB",
                "devices.mock.inventory.devices[0].count", 2)));
        assertThat(nodeArgs(inventory)).contains("--device-source=mock",
                "--mock-inventory=/etc/tenant-gateway/mock/inventory.yaml");
        assertThat(mountedFiles(inventory).get("/etc/tenant-gateway/mock/inventory.yaml")).contains("L4-24GB");
        assertThat(granted(inventory, NODE_ACCOUNT)).contains("core/nodes/status:patch")
                .doesNotContain("core/pods:patch");
        assertThat(granted(inventory, KAMAJI_ACCOUNT)).doesNotContain("core/nodes/status:patch");
    }

    /**
     * Every object each mode renders is used by another one there or is one the release is for
     * ({@link RenderedManifests#unused}): under Kamaji no ConfigMap for a DaemonSet that is not ours.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("modes")
    void everyObjectTheChartRendersIsUsed(Mode mode) {
        assertThat(RenderedManifests.unused(parse(template(mode)))).isEmpty();
    }

    // --- single features --------------------------------------------------------------------------------------

    @Test
    void certificateModesWireTheSecretTheWebhookConfigurationAndTheAgent() {
        // cert-manager: the Certificate writes the Secret the DaemonSet mounts; the cainjector owns the caBundle.
        List<HasMetadata> certManager = parse(template(Mode.ci("cert-manager-values.yaml")));
        GenericKubernetesResource certificate = certManager.stream()
                .filter(o -> o.getKind().equals("Certificate")).map(GenericKubernetesResource.class::cast)
                .findFirst().orElseThrow();
        assertThat(certManager).anyMatch(o -> o.getKind().equals("Issuer"));
        assertThat(certificate.<String>get("spec", "secretName")).isEqualTo("tenant-gateway-webhook-tls");
        assertThat(certificate.<List<String>>get("spec", "dnsNames")).contains("tenant-gateway-webhook.kube-system.svc");
        assertThat(certificate.<String>get("spec", "issuerRef", "name")).isEqualTo("tenant-gateway-selfsigned");
        assertThat(only(certManager, MutatingWebhookConfiguration.class).getMetadata().getAnnotations())
                .containsEntry("cert-manager.io/inject-ca-from", "kube-system/" + certificate.getMetadata().getName());
        var pod = only(certManager, DaemonSet.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).anyMatch(v -> v.getSecret() != null
                && v.getSecret().getSecretName().equals("tenant-gateway-webhook-tls"));
        assertThat(pod.getContainers().get(0).getArgs()).contains("--webhook-tls-cert=/etc/tenant-gateway/webhook/tls.crt")
                .noneMatch(a -> a.startsWith("--manage-webhook-config"));

        // An existing ClusterIssuer under Kamaji: no Issuer of ours; the agent reads the Secret through the API.
        Mode kamaji = Mode.ci("kamaji-cert-manager-values.yaml");
        List<HasMetadata> kamajiObjects = parse(template(kamaji));
        assertThat(kamajiObjects).noneMatch(o -> o.getKind().equals("Issuer"));
        assertThat(kamajiObjects.stream().filter(o -> o.getKind().equals("Certificate"))
                .map(GenericKubernetesResource.class::cast).findFirst().orElseThrow()
                .<String>get("spec", "issuerRef", "kind")).isEqualTo("ClusterIssuer");
        @SuppressWarnings("unchecked")
        List<String> kamajiArgs = (List<String>) kamajiAgentPatch(kamaji).get("extraArgs");
        assertThat(kamajiArgs).contains("--webhook-tls-secret=kube-system/tenant-gateway-webhook-tls")
                .doesNotContain("--manage-webhook-config=true");

        // self-managed: nothing mounted; the agent creates, stores and renews the certificate in the Secret, with
        // the durations of the values; the Secret's create and update are a Role in the release namespace.
        List<HasMetadata> selfManaged = parse(template(Mode.ci("self-managed-certificates-values.yaml")));
        var selfPod = only(selfManaged, DaemonSet.class).getSpec().getTemplate().getSpec();
        assertThat(selfPod.getVolumes()).noneMatch(v -> v.getSecret() != null);
        assertThat(selfPod.getContainers().get(0).getArgs()).containsSubsequence("--webhook-listen=0.0.0.0:9443",
                "--webhook-tls-secret=kube-system/tenant-gateway-webhook-tls", "--webhook-tls-self-managed=true",
                "--webhook-tls-validity=2160h", "--webhook-tls-renew-before=240h", "--webhook-ca-validity=43800h",
                "--manage-webhook-config=true").noneMatch(a -> a.startsWith("--webhook-tls-cert")
                        || a.startsWith("--webhook-ca-bundle") || a.startsWith("--webhook-service"));
        assertThat(selfManaged).filteredOn(o -> o.getKind().equals("Certificate") || o.getKind().equals("Issuer"))
                .isEmpty();
        Role secretRole = only(selfManaged, Role.class);
        assertThat(secretRole.getMetadata().getNamespace()).isEqualTo("kube-system");
        assertThat(secretRole.getRules()).satisfiesExactly(create -> {
            assertThat(create.getVerbs()).containsExactly("create");
            assertThat(create.getResourceNames()).isEmpty();
        }, update -> {
            assertThat(update.getVerbs()).containsExactly("update");
            assertThat(update.getResourceNames()).containsExactly("tenant-gateway-webhook-tls");
        });
        assertThat(only(selfManaged, RoleBinding.class).getSubjects()).singleElement()
                .satisfies(s -> assertThat(s.getName()).isEqualTo("tenant-gateway"));
        assertThat(selfManaged).filteredOn(ValidatingAdmissionPolicy.class::isInstance)
                .extracting(o -> o.getMetadata().getName())
                .containsExactlyInAnyOrder("tenant-gateway-own-node", "tenant-gateway-webhook-tls-secret");
        // No ClusterRole grants Secret create: only the Role, in the Secret's namespace.
        assertThat(selfManaged).noneMatch(o -> o instanceof ClusterRole && ((ClusterRole) o).getRules().stream()
                .anyMatch(r -> r.getVerbs().contains("create") && r.getResources().contains("secrets")));
        // Without the mode, none of it.
        List<HasMetadata> secret = parse(template(Mode.DEFAULTS));
        assertThat(secret).noneMatch(o -> o instanceof Role || o instanceof RoleBinding
                || o.getMetadata().getName().equals("tenant-gateway-webhook-tls-secret"));
        assertThat(container(secret).getArgs()).noneMatch(a -> a.startsWith("--webhook-tls-self-managed")
                || a.startsWith("--webhook-tls-secret"));
    }

    /**
     * The chart's Secret policy, evaluated with cel-java as {@link WebhookTlsSecretPolicyCelTest} evaluates the
     * component's: with another Secret name and namespace it admits exactly that Secret, for the release's account.
     */
    @Test
    void selfManagedSecretPolicyAndRulesFollowTheSecretNameAndNamespace() {
        List<HasMetadata> objects = parse(template(Mode.DEFAULTS, "gpu-system", Map.of("webhook.certificates.mode",
                "self-managed", "webhook.certificates.secretName", "gpu-webhook-tls")));
        var policy = OwnNodePolicyCelTest.compile(objects.stream().filter(ValidatingAdmissionPolicy.class::isInstance)
                .map(ValidatingAdmissionPolicy.class::cast)
                .filter(p -> p.getMetadata().getName().equals("tenant-gateway-webhook-tls-secret")).findFirst()
                .orElseThrow());
        String agent = "system:serviceaccount:gpu-system:tenant-gateway";
        var ours = WebhookTlsSecretPolicyCelTest.OURS;
        assertThat(OwnNodePolicyCelTest.admit(policy, WebhookTlsSecretPolicyCelTest.write("CREATE", agent,
                WebhookTlsSecretPolicyCelTest.secret("gpu-webhook-tls", "kubernetes.io/tls", ours))))
                .isEqualTo(new OwnNodePolicyCelTest.Outcome(true, List.of()));
        assertThat(OwnNodePolicyCelTest.admit(policy, WebhookTlsSecretPolicyCelTest.write("UPDATE", agent,
                WebhookTlsSecretPolicyCelTest.secret("tenant-gateway-webhook-tls", "kubernetes.io/tls", ours)))
                .denials()).containsExactly("the agent may write only the Secret gpu-webhook-tls");
        assertThat(OwnNodePolicyCelTest.admit(policy, WebhookTlsSecretPolicyCelTest.write("CREATE", STANDALONE_ACCOUNT,
                WebhookTlsSecretPolicyCelTest.secret("gpu-webhook-tls", "kubernetes.io/tls", ours))).matched())
                .isFalse();
        assertThat(only(objects, Role.class).getRules().get(1).getResourceNames()).containsExactly("gpu-webhook-tls");
        assertThat(objects).filteredOn(ClusterRole.class::isInstance).map(ClusterRole.class::cast)
                .filteredOn(r -> r.getMetadata().getName().equals("tenant-gateway-webhook-tls-secret"))
                .singleElement().satisfies(r -> assertThat(r.getRules().get(0).getResourceNames())
                        .containsExactly("gpu-webhook-tls"));
        assertThat(agentArgs(Mode.DEFAULTS, objects)).contains("--webhook-tls-secret=gpu-system/gpu-webhook-tls");
    }

    /** The self-managed durations parse into the agent's certificate settings as the values give them. */
    @Test
    void selfManagedDurationsReachTheAgentsCertificateSettings() throws IOException {
        Mode mode = Mode.ci("self-managed-certificates-values.yaml");
        List<HasMetadata> objects = parse(template(mode));
        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp, agentArgs(mode, objects),
                mountedFiles(objects)).toArray(String[]::new)).toConfig();
        WebhookCertificatesConfig certificates = config.webhook().flatMap(WebhookSettings::certificates)
                .orElseThrow();
        assertThat(certificates.validity()).isEqualTo(Duration.ofHours(2160));
        assertThat(certificates.renewBefore()).isEqualTo(Duration.ofHours(240));
        assertThat(certificates.caValidity()).isEqualTo(Duration.ofHours(43800));
        assertThat(config.webhookConfiguration()).isPresent();
    }

    /**
     * {@code hami.deviceConfigMap}: the agent's default renders no flag (the base's DaemonSet has none), another
     * ConfigMap renders {@code --device-config-map} and the ClusterRole's rule names it, {@code ""} turns the watch
     * and its permissions off.
     */
    @Test
    void deviceConfigMapValueMapsToTheFlagAndTheRulesName() throws IOException {
        List<HasMetadata> defaults = parse(template(Mode.DEFAULTS));
        assertThat(container(defaults).getArgs()).noneMatch(a -> a.startsWith("--device-config-map"));
        assertThat(configMapRules(defaults)).singleElement().satisfies(rule -> assertThat(rule.getResourceNames())
                .containsExactly("hami-scheduler-device"));

        List<HasMetadata> other = parse(template(Mode.DEFAULTS, NAMESPACE,
                Map.of("hami.deviceConfigMap", "hami-system/gpu-device-config")));
        assertThat(container(other).getArgs()).contains("--device-config-map=hami-system/gpu-device-config");
        assertThat(configMapRules(other)).singleElement().satisfies(rule -> assertThat(rule.getResourceNames())
                .containsExactly("gpu-device-config"));
        List<String> otherArgs = agentArgs(Mode.DEFAULTS, other);
        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp.resolve("other"), otherArgs,
                Map.of()).toArray(String[]::new)).toConfig();
        assertThat(config.webhook().flatMap(WebhookSettings::deviceConfigMap))
                .contains("hami-system/gpu-device-config");

        List<HasMetadata> off = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("hami.deviceConfigMap", "")));
        assertThat(container(off).getArgs()).contains("--device-config-map=");
        assertThat(configMapRules(off)).isEmpty();
        Set<Use> uses = RenderedManifests.uses(temp.resolve("off"), agentArgs(Mode.DEFAULTS, off), false, Map.of());
        assertThat(uses).doesNotContain(Use.DEVICE_CONFIG_MAP);
        assertThat(granted(off, STANDALONE_ACCOUNT)).isEqualTo(declared(uses));

        // Kamaji passes the same flag in the TenantControlPlane patch.
        Mode kamaji = Mode.ci("kamaji-values.yaml");
        @SuppressWarnings("unchecked")
        List<String> kamajiArgs = (List<String>) kamajiAgentPatch(kamaji).get("extraArgs");
        assertThat(kamajiArgs).noneMatch(a -> a.startsWith("--device-config-map"));
    }

    /** HAMi's chart names for the vendor switches reach the webhook's policy (off by default, as in HAMi's chart). */
    @Test
    void vendorSwitchesReachTheWebhooksPolicy() throws IOException {
        assertThat(container(parse(template(Mode.DEFAULTS))).getArgs())
                .noneMatch(a -> a.startsWith("--enable-ascend") || a.startsWith("--enable-iluvatar"));
        List<HasMetadata> on = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("devices.ascend.enabled", "true",
                "devices.iluvatar.enabled", "true")));
        assertThat(container(on).getArgs()).contains("--enable-ascend", "--enable-iluvatar");
        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp.resolve("vendors"),
                agentArgs(Mode.DEFAULTS, on), Map.of()).toArray(String[]::new)).toConfig();
        assertThat(config.webhook().orElseThrow().config().policy()).satisfies(policy -> {
            assertThat(policy.enableAscend()).isTrue();
            assertThat(policy.enableIluvatar()).isTrue();
        });
    }

    /**
     * {@code devices.reportNodeCapacity} (off by default) under Kamaji too: with devices on, the node role's, so the
     * flag is in its DaemonSet's arguments (not the TenantControlPlane patch's), nodes/status patch in its ClusterRole,
     * and the own-node policy, which matches the node role, has its switch on.
     */
    @Test
    void reportNodeCapacityIsOffByDefaultAndUnderKamajiReachesTheNodeRolesArgsRoleAndThePolicy() throws IOException {
        for (Mode mode : List.of(Mode.DEFAULTS, Mode.ci("real-gpus-values.yaml"), Mode.ci("kamaji-values.yaml"))) {
            List<HasMetadata> objects = parse(template(mode));
            assertThat(agentArgs(mode, objects)).as("%s", mode).noneMatch(a -> a.startsWith("--report-node-capacity"));
            assertThat(variable(objects, "reportCapacity")).as("%s", mode).isEqualTo("false");
        }
        Mode kamaji = Mode.ci("kamaji-values.yaml");
        Map<String, Object> set = Map.of("devices.source", "mock", "devices.mock.gpus", "A100-80GB",
                "devices.reportNodeCapacity", true);
        List<HasMetadata> objects = parse(template(kamaji, NAMESPACE, set));
        @SuppressWarnings("unchecked")
        List<String> extraArgs = (List<String>) path(kamajiPatch(notes(kamaji, set)), "spec", "addons",
                "konnectivity", "agent", "extraArgs");
        assertThat(extraArgs).noneMatch(a -> a.startsWith("--device-source") || a.startsWith("--report-node-capacity"));
        List<String> args = nodeArgs(objects);
        assertThat(args).contains("--tunnel=false", "--device-source=mock", "--report-node-capacity=true");
        Set<Use> uses = RenderedManifests.uses(temp.resolve("kamaji-node-capacity"), args, false, Map.of());
        assertThat(uses).contains(Use.NODE_CAPACITY, Use.GPU_CAPACITY);
        assertThat(granted(objects, NODE_ACCOUNT)).isEqualTo(declared(uses)).contains("core/nodes/status:patch");
        assertThat(granted(objects, KAMAJI_ACCOUNT)).doesNotContain("core/nodes/status:patch");
        assertThat(variable(objects, "reportCapacity")).isEqualTo("true");
        assertThat(variable(objects, "capacityWrites")).isEqualTo("true");
    }

    /** The expression of the own-node policy's variable {@code name}. */
    private static String variable(List<HasMetadata> objects, String name) {
        return objects.stream().filter(ValidatingAdmissionPolicy.class::isInstance)
                .map(ValidatingAdmissionPolicy.class::cast)
                .filter(p -> p.getMetadata().getName().equals("tenant-gateway-own-node")).findFirst().orElseThrow()
                .getSpec().getVariables().stream().filter(v -> v.getName().equals(name)).findFirst().orElseThrow()
                .getExpression();
    }

    private static List<PolicyRule> configMapRules(List<HasMetadata> objects) {
        return objects.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast)
                .flatMap(r -> r.getRules().stream()).filter(r -> r.getResources().contains("configmaps")).toList();
    }

    /**
     * The device plugin's other values ({@code ci/device-plugin-values.yaml}): the directory moves the flag, the
     * mount and the hostPath together, NUMA topology and HAMi's image reach the flag and the init container, and the
     * agent parses them into its device plugin settings; without {@code devicePlugin.enabled} none of it renders.
     */
    @Test
    void devicePluginValuesReachTheFlagsTheMountsAndTheInitContainer() throws IOException {
        String dir = "/var/lib/k0s/kubelet/device-plugins";
        List<HasMetadata> objects = parse(template(Mode.ci("device-plugin-values.yaml")));
        Container container = container(objects);
        assertThat(container.getArgs()).containsSubsequence("--allocation-mode=device-plugin", "--device-plugin=true",
                "--device-plugin-dir=" + dir, "--device-plugin-numa-topology=true", "--device-source=mock",
                "--mock-inventory=/etc/tenant-gateway/mock/inventory.yaml");
        var pod = only(objects, DaemonSet.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes()).filteredOn(v -> v.getHostPath() != null)
                .extracting(v -> v.getName() + "=" + v.getHostPath().getPath())
                .containsExactly("device-plugins=" + dir, "vgpu=/usr/local/vgpu", "vgpulock=/tmp/vgpulock");
        assertThat(container.getVolumeMounts()).extracting(VolumeMount::getMountPath)
                .contains(dir, "/usr/local/vgpu", "/tmp/vgpulock");
        assertThat(pod.getInitContainers()).singleElement().satisfies(init -> {
            assertThat(init.getImage()).isEqualTo("registry.example.com/mirror/projecthami/hami:v2.10.0");
            assertThat(init.getImagePullPolicy()).isEqualTo("IfNotPresent");
        });
        assertThat(pod.getSecurityContext().getRunAsUser()).isZero();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isFalse();
        assertThat(mountedFiles(objects).get("/etc/tenant-gateway/mock/inventory.yaml"))
                .contains("preset: L4-24GB", "count: 2");
        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp, agentArgs(Mode.ci(
                "device-plugin-values.yaml"), objects), mountedFiles(objects)).toArray(String[]::new)).toConfig();
        var plugin = config.devicePlugin().orElseThrow().plugin();
        assertThat(plugin.numaTopology()).isTrue();
        assertThat(plugin.directory().toString()).endsWith(dir);

        // Without the lock controller the device plugin still gets its own reads and writes (pods get/list, nodes
        // get/patch, events), as KubernetesPermissions declares for it alone.
        List<HasMetadata> noLock = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("devicePlugin.enabled", true,
                "devices.source", "mock", "devices.mock.gpus", "L4-24GB", "hami.lockController.enabled", false)));
        Set<Use> uses = RenderedManifests.uses(temp.resolve("no-lock"), agentArgs(Mode.DEFAULTS, noLock), false,
                Map.of());
        assertThat(uses).contains(Use.DEVICE_PLUGIN).doesNotContain(Use.LOCK_CONTROLLER);
        assertThat(granted(noLock, STANDALONE_ACCOUNT)).isEqualTo(declared(uses)).contains("core/pods:patch");

        var defaults = parse(template(Mode.DEFAULTS));
        assertThat(container(defaults).getArgs()).contains("--allocation-mode=observe")
                .noneMatch(arg -> arg.startsWith("--device-plugin"));
        var defaultPod = only(defaults, DaemonSet.class).getSpec().getTemplate().getSpec();
        assertThat(defaultPod.getInitContainers()).isEmpty();
        assertThat(defaultPod.getVolumes()).noneMatch(v -> v.getHostPath() != null);
        assertThat(defaultPod.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
    }

    /**
     * Simulated Hygon DCU and Ascend devices on the simulated-gpus mode ({@code devices.mock.devices}): the flag
     * follows {@code --mock-gpus}, {@code devices.ascend.enabled} adds {@code --enable-ascend}, no permission changes,
     * and the chart renders the same objects as {@code overlays/simulated-gpus} with {@code components/mock-devices};
     * the devices alone satisfy {@code devices.source=mock}.
     */
    @Test
    void mockDevicesFollowTheMockGpusAndMatchTheMockDevicesComponent() throws Exception {
        Mode simulated = Mode.ci("simulated-gpus-values.yaml");
        List<HasMetadata> objects = parse(template(simulated, NAMESPACE, Map.of("devices.mock.devices",
                "Ascend910B4:2,DCU-K100:1", "devices.ascend.enabled", true)));
        assertThat(container(objects).getArgs()).containsSubsequence("--device-source=mock", "--mock-gpus=A100-80GB",
                "--mock-devices=Ascend910B4:2,DCU-K100:1", "--enable-ascend");
        assertThat(granted(objects, STANDALONE_ACCOUNT)).isEqualTo(granted(parse(template(simulated)),
                STANDALONE_ACCOUNT));

        List<HasMetadata> devicesOnly = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("devicePlugin.enabled", true,
                "devices.source", "mock", "devices.mock.devices", "DCU-K100")));
        assertThat(container(devicesOnly).getArgs()).contains("--device-source=mock", "--mock-devices=DCU-K100")
                .noneMatch(arg -> arg.startsWith("--mock-gpus"));

        assumeTrue(RenderedManifests.kubectl(), "kubectl renders kustomize");
        List<String> dirs = List.of("overlays/simulated-gpus", "components/mock-devices");
        assertThat(kustomizeDifferences(dirs, null, objects)).as("chart vs kubectl kustomize %s", dirs).isEmpty();
    }

    @Test
    void withoutTheWebhookItsObjectsFlagsAndPermissionsGo() throws IOException {
        List<HasMetadata> objects = parse(template(Mode.DEFAULTS, NAMESPACE, Map.of("webhook.enabled", false)));
        assertThat(objects).noneMatch(o -> o instanceof Service || o instanceof MutatingWebhookConfiguration);
        List<String> args = agentArgs(Mode.DEFAULTS, objects);
        assertThat(args).noneMatch(arg -> arg.startsWith("--webhook") || arg.startsWith("--manage-webhook-config"));
        assertThat(container(objects).getPorts()).extracting(p -> p.getName()).containsExactly("health");
        Set<Use> uses = RenderedManifests.uses(temp, args, false, Map.of());
        assertThat(uses).doesNotContain(Use.WEBHOOK_QUOTA, Use.MANAGED_WEBHOOK_CONFIG).contains(Use.LOCK_CONTROLLER);
        assertThat(granted(objects, STANDALONE_ACCOUNT)).isEqualTo(declared(uses))
                .doesNotContain("core/resourcequotas:list");
    }

    @Test
    void dashboardConfigMapHoldsTheDashboardFileOnRequest() throws IOException {
        assertThat(parse(template(Mode.DEFAULTS))).noneMatch(o -> o.getKind().equals("ServiceMonitor")
                || o.getMetadata().getName().equals("tenant-gateway-dashboard"));
        List<HasMetadata> objects = parse(template(Mode.DEFAULTS, NAMESPACE,
                Map.of("dashboard.enabled", true, "dashboard.namespace", "monitoring")));
        ConfigMap dashboard = objects.stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .filter(c -> c.getMetadata().getName().equals("tenant-gateway-dashboard")).findFirst().orElseThrow();
        assertThat(dashboard.getMetadata().getNamespace()).isEqualTo("monitoring");
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        String file = Files.readString(RenderedManifests.MANIFESTS.resolve("dashboards/tenant-gateway.json"));
        assertThat(SERIALIZATION.unmarshal(dashboard.getData().get("tenant-gateway.json"), Map.class))
                .isEqualTo(SERIALIZATION.unmarshal(file, Map.class));
    }

    @Test
    void anotherNamespaceMovesEveryReference() throws IOException {
        List<HasMetadata> objects = parse(template(Mode.DEFAULTS, "gpu-system", Map.of()));
        assertThat(objects).filteredOn(o -> o.getMetadata().getNamespace() != null)
                .isNotEmpty().allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo("gpu-system"));
        assertThat(only(objects, ValidatingAdmissionPolicy.class).getSpec().getMatchConditions().get(0)
                .getExpression()).contains("'system:serviceaccount:gpu-system:tenant-gateway'");
        var webhook = only(objects, MutatingWebhookConfiguration.class).getWebhooks().get(0);
        assertThat(webhook.getClientConfig().getService().getNamespace()).isEqualTo("gpu-system");
        assertThat(webhook.getNamespaceSelector().getMatchExpressions()).anySatisfy(e -> assertThat(e.getValues())
                .containsExactly("kube-system", "gpu-system"));
        assertThat(only(objects, Service.class).getMetadata().getNamespace()).isEqualTo("gpu-system");
        Set<Use> uses = RenderedManifests.uses(temp, agentArgs(Mode.DEFAULTS, objects), false, Map.of());
        assertThat(granted(objects, "system:serviceaccount:gpu-system:tenant-gateway")).isEqualTo(declared(uses));

        // Self-managed certificates: the Secret, its Role and the Service the certificate names move too.
        List<HasMetadata> selfManaged = parse(template(Mode.DEFAULTS, "gpu-system",
                Map.of("webhook.certificates.mode", "self-managed")));
        assertThat(selfManaged).filteredOn(o -> o.getMetadata().getNamespace() != null)
                .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo("gpu-system"));
        assertThat(selfManaged).filteredOn(ValidatingAdmissionPolicy.class::isInstance).hasSize(2)
                .allSatisfy(p -> assertThat(((ValidatingAdmissionPolicy) p).getSpec().getMatchConditions().get(0)
                        .getExpression()).contains("'system:serviceaccount:gpu-system:tenant-gateway'"));
        List<String> args = agentArgs(Mode.DEFAULTS, selfManaged);
        assertThat(args).contains("--webhook-tls-secret=gpu-system/tenant-gateway-webhook-tls",
                "--webhook-service=gpu-system/tenant-gateway-webhook");
        AgentConfig config = AgentCommand.parse(RenderedManifests.withStandIns(temp.resolve("self-managed"), args,
                Map.of()).toArray(String[]::new)).toConfig();
        assertThat(config.webhook().flatMap(WebhookSettings::certificates).orElseThrow().dnsNames())
                .contains("tenant-gateway-webhook.gpu-system.svc");
        Set<Use> selfManagedUses = RenderedManifests.uses(temp.resolve("uses"), args, false, Map.of());
        assertThat(selfManagedUses).contains(Use.WEBHOOK_TLS_SELF_MANAGED);
        assertThat(granted(selfManaged, "system:serviceaccount:gpu-system:tenant-gateway"))
                .isEqualTo(declared(selfManagedUses));
    }

    @Test
    void badValuesAreRefusedNamingTheValue() {
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("mode", "operator")))
                .hasMessageContaining("mode").hasMessageContaining("standalone");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("webhook.certificates.mode", "vault")))
                .hasMessageContaining("webhook.certificates.mode");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("webhok.enabled", false)))
                .hasMessageContaining("webhok");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("webhook.certificates.selfManaged"
                + ".renewBefore", "10 days"))).hasMessageContaining("renewBefore");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("hami.deviceConfigMap",
                "hami-scheduler-device"))).hasMessageContaining("deviceConfigMap");
        assertThatThrownBy(() -> template(Mode.ci("kamaji-values.yaml"), "tenant", Map.of()))
                .hasMessageContaining("mode=kamaji: namespace tenant (expected: kube-system");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("devices.source", "mock")))
                .hasMessageContaining("devices.source=mock: no GPUs (expected: devices.mock.gpus, e.g. A100-80GB, "
                        + "devices.mock.devices, e.g. Ascend910B4:2,DCU-K100:1, or devices.mock.inventory)");
        // Under Kamaji the device plugin runs in the node role, which devices turn on.
        assertThatThrownBy(() -> template(Mode.ci("kamaji-values.yaml"), NAMESPACE, Map.of("devicePlugin.enabled",
                true))).hasMessageContaining("devicePlugin.enabled: true with devices.source=none (expected:");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("devicePlugin.enabled", true)))
                .hasMessageContaining("devicePlugin.enabled: true with devices.source=none (expected:");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("devices.reportNodeCapacity", true)))
                .hasMessageContaining("devices.reportNodeCapacity: true with devices.source=none (expected:");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("hami.allocationMode", "device-plugin")))
                .hasMessageContaining("hami.allocationMode=device-plugin without devicePlugin.enabled");
        assertThatThrownBy(() -> template(Mode.DEFAULTS, NAMESPACE, Map.of("hami.allocationMode", "complete")))
                .hasMessageContaining("allocationMode");
    }

    /** The chart README's values table names every value of the schema, and every ci file is a documented mode. */
    @Test
    @SuppressWarnings("unchecked")
    void readmeDocumentsEveryValueAndMode() throws IOException {
        String readme = Files.readString(CHART.resolve("README.md"));
        Map<String, Object> schema = SERIALIZATION.unmarshal(Files.readString(CHART.resolve("values.schema.json")),
                Map.class);
        List<String> leaves = new ArrayList<>();
        leaves(schema, "", leaves);
        assertThat(leaves).hasSizeGreaterThan(40)
                .allSatisfy(leaf -> assertThat(readme).as("values table").contains("| `" + leaf + "` |"));
        modes().filter(m -> m.values() != null).forEach(m -> assertThat(readme).contains("ci/" + m.name()));
    }

    @SuppressWarnings("unchecked")
    private static void leaves(Map<String, Object> schema, String prefix, List<String> out) {
        Map<String, Object> properties = (Map<String, Object>) schema.get("properties");
        // Free-form maps (resources, affinity, ...) and the issuer reference are documented as one value.
        if (properties == null || prefix.endsWith("issuerRef")) {
            out.add(prefix);
            return;
        }
        properties.forEach((key, value) -> leaves((Map<String, Object>) value, prefix.isEmpty() ? key
                : prefix + "." + key, out));
    }
}
