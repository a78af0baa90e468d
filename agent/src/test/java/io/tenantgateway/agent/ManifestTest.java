package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.hami.Annotations;
import io.tenantgateway.hami.NodeVendor;
import io.tenantgateway.agent.devices.NodeCapacityReport;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Use;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.RenderedManifests;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.policy.NvidiaConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The manifests agree with the code: every YAML parses, the DaemonSet's arguments parse with the real CLI, ports
 * and paths match, and each mode's ClusterRoles grant exactly the {@link KubernetesPermissions} its flags use.
 */
class ManifestTest {
    private static final String BASE_ACCOUNT = "system:serviceaccount:kube-system:tenant-gateway";
    private static final String KAMAJI_ACCOUNT = "system:serviceaccount:kube-system:konnectivity-agent";
    private static final String NODE_ACCOUNT = "system:serviceaccount:kube-system:tenant-gateway-node";

    @TempDir
    Path files;

    private static final Path MANIFESTS = RenderedManifests.MANIFESTS;
    private final KubernetesSerialization serialization = new KubernetesSerialization();

    private List<HasMetadata> parse(String yaml) {
        return RenderedManifests.parse(yaml);
    }

    private List<HasMetadata> base() throws IOException {
        List<HasMetadata> objects = new ArrayList<>();
        try (Stream<Path> files = Files.list(MANIFESTS.resolve("base"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                if (!file.getFileName().toString().equals("kustomization.yaml")) {
                    objects.addAll(parse(Files.readString(file)));
                }
            }
        }
        return objects;
    }

    private static <T> T only(List<HasMetadata> objects, Class<T> type) {
        return RenderedManifests.only(objects, type);
    }

    @Test
    void everyYamlParses() throws IOException {
        try (Stream<Path> files = Files.walk(MANIFESTS)) {
            List<Path> yamls = files.filter(f -> f.toString().endsWith(".yaml")).toList();
            assertThat(yamls).hasSizeGreaterThanOrEqualTo(9);
            for (Path file : yamls) {
                for (String document : Files.readString(file).split("(?m)^---\\s*$")) {
                    Object parsed = serialization.unmarshal(document, Object.class);
                    assertThat(parsed).as(file.toString()).isNotNull();
                }
            }
        }
        List<HasMetadata> base = base();
        assertThat(base).extracting(HasMetadata::getKind).contains("ServiceAccount", "ClusterRole",
                "ClusterRoleBinding", "DaemonSet", "Service", "MutatingWebhookConfiguration",
                "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
        ValidatingAdmissionPolicy policy = only(base, ValidatingAdmissionPolicy.class);
        ValidatingAdmissionPolicyBinding binding = only(base, ValidatingAdmissionPolicyBinding.class);
        assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
        assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
        assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
        assertThat(policy.getSpec().getMatchConstraints().getResourceRules().get(0).getResources())
                .containsExactly("nodes", "nodes/status");
        assertThat(policy.getSpec().getMatchConstraints().getResourceRules().get(0).getOperations())
                .containsExactly("UPDATE");
        // The policy's HAMi keys are exactly the node annotations the agent writes.
        assertThat(policy.getSpec().getVariables()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("hamiAnnotations");
            assertThat(v.getExpression()).isEqualTo("['" + String.join("', '", Annotations.NODE_NVIDIA_REGISTER,
                    Annotations.NODE_HANDSHAKE, Annotations.NODE_LOCK) + "']");
        });
        // ... and for simulated vendors, Hygon's keys and Ascend's per-chip keys (prefixes up to the chip name).
        NodeVendor ascend = NodeVendor.ascend("Ascend");
        assertThat(policy.getSpec().getVariables()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("vendorAnnotations");
            assertThat(v.getExpression()).isEqualTo("['" + String.join("', '", NodeVendor.HYGON.registerKey(),
                    NodeVendor.HYGON.handshakeKey(), "hami-vnpu-core") + "']");
        }).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("vendorAnnotationPrefixes");
            assertThat(v.getExpression()).isEqualTo("['" + ascend.registerKey() + "', '" + ascend.handshakeKey()
                    + "']");
        }).anySatisfy(v -> {
            // --report-node-capacity's resources under HAMi's default names (the agent's, without --device-config).
            assertThat(v.getName()).isEqualTo("reportedResources");
            assertThat(v.getExpression()).isEqualTo("['" + String.join("', '", new NodeCapacityReport(
                    NvidiaConfig.defaults().resourceMemoryName(), NvidiaConfig.defaults().resourceCoreName())
                    .resources()) + "']");
        }).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("vendorResources");
            assertThat(v.getExpression()).isEqualTo("['" + String.join("', '", NodeVendor.HYGON.resourceName(),
                    NodeVendor.HYGON.memoryResource(), NodeVendor.HYGON.coreResource()) + "']");
        });
    }

    /** Arguments as the kubelet passes them: $(VAR) references expanded from the container's env. */
    private static List<String> expandedArgs(Container container, Map<String, String> values) {
        return RenderedManifests.expandedArgs(container, values);
    }

    /** A flag's value as parsed, wherever its mixin keeps it. */
    private static Object flag(AgentCommand run, String name) {
        return run.spec.findOption(name).getValue();
    }

    private static AgentCommand parseRun(List<String> args) {
        assertThat(args.get(0)).isEqualTo("run");
        AgentCommand command = new AgentCommand();
        // A flag the CLI does not know fails the parse (UnmatchedArgumentException), as it fails `run`.
        new CommandLine(command).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
        return command;
    }

    @Test
    void daemonSetArgsParseWithTheRealCliAndMatchPortsProbesAndVolumes() throws IOException {
        List<HasMetadata> objects = base();
        DaemonSet daemonSet = only(objects, DaemonSet.class);
        Container container = daemonSet.getSpec().getTemplate().getSpec().getContainers().get(0);
        AgentCommand run = parseRun(expandedArgs(container, Map.of("PROXY_SERVER_HOST", "konnectivity.example.com",
                "PROXY_SERVER_PORT", "8132")));

        assertThat(flag(run, "--proxy-server-host")).isEqualTo("konnectivity.example.com");
        assertThat(flag(run, "--proxy-server-port")).isEqualTo(8132);
        assertThat(flag(run, "--ca-cert")).hasToString("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
        assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        Object healthPort = flag(run, "--health-server-port");
        assertThat(container.getLivenessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(healthPort);
        assertThat(container.getReadinessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(healthPort);
        int webhookPort = HostPort.parse("--webhook-listen", (String) flag(run, "--webhook-listen")).port();
        assertThat(container.getPorts()).anySatisfy(port -> {
            assertThat(port.getName()).isEqualTo("webhook");
            assertThat(port.getContainerPort()).isEqualTo(webhookPort);
        });
        assertThat(container.getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("NODE_NAME");
            assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
        });

        // The token the agent reads is the projected one with konnectivity-server's audience.
        var token = daemonSet.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getProjected() != null).findFirst().orElseThrow()
                .getProjected().getSources().get(0).getServiceAccountToken();
        assertThat(token.getAudience()).isEqualTo("system:konnectivity-server");
        assertThat(Path.of("/var/run/secrets/tokens", token.getPath()))
                .isEqualTo(flag(run, "--service-account-token-path"));
        assertThat(container.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath())
                .isEqualTo(((Path) flag(run, "--webhook-tls-cert")).getParent().toString()));

        var security = container.getSecurityContext();
        assertThat(security.getReadOnlyRootFilesystem()).isTrue();
        assertThat(security.getAllowPrivilegeEscalation()).isFalse();
        assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
        var podSecurity = daemonSet.getSpec().getTemplate().getSpec().getSecurityContext();
        assertThat(podSecurity.getRunAsNonRoot()).isTrue();
        assertThat(podSecurity.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        assertThat(daemonSet.getSpec().getTemplate().getSpec().getTolerations())
                .extracting(t -> t.getKey()).contains("CriticalAddonsOnly", "nvidia.com/gpu");
        assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(container.getResources().getLimits()).containsKey("memory");
    }

    @Test
    void webhookServiceAndConfigurationPointAtTheServer() throws IOException {
        List<HasMetadata> objects = base();
        Service service = only(objects, Service.class);
        ServicePort port = service.getSpec().getPorts().get(0);
        assertThat(port.getPort()).isEqualTo(443);
        assertThat(port.getTargetPort().getStrVal()).isEqualTo("webhook");

        MutatingWebhookConfiguration configuration = only(objects, MutatingWebhookConfiguration.class);
        assertThat(configuration.getMetadata().getName()).isEqualTo(AgentCommand.DEFAULT_WEBHOOK_CONFIG_NAME);
        MutatingWebhook webhook = configuration.getWebhooks().get(0);
        assertThat(webhook.getClientConfig().getService().getName()).isEqualTo(service.getMetadata().getName());
        assertThat(webhook.getClientConfig().getService().getNamespace()).isEqualTo("kube-system");
        assertThat(webhook.getClientConfig().getService().getPort()).isEqualTo(443);
        assertThat(webhook.getClientConfig().getService().getPath()).isEqualTo(WebhookConfig.DEFAULT_PATH);
        assertThat(webhook.getAdmissionReviewVersions()).containsExactly("v1", "v1beta1");
        assertThat(webhook.getTimeoutSeconds()).isEqualTo(10);
        assertThat(webhook.getSideEffects()).isEqualTo("None");
        assertThat(webhook.getFailurePolicy()).isEqualTo("Fail");
        assertThat(webhook.getRules().get(0).getOperations()).containsExactly("CREATE");
        assertThat(webhook.getRules().get(0).getResources()).containsExactly("pods");
        assertThat(webhook.getObjectSelector().getMatchExpressions().get(0).getKey()).isEqualTo("hami.io/webhook");
        assertThat(webhook.getNamespaceSelector().getMatchExpressions())
                .anySatisfy(e -> assertThat(e.getValues()).containsExactly("ignore"))
                .anySatisfy(e -> assertThat(e.getValues()).containsExactly("kube-system"));
    }

    /**
     * The permission keys the ClusterRoles bound to {@code account}, and the Roles bound to it in kube-system (the
     * Secret create of {@code components/webhook-tls-self-managed}), grant.
     */
    private static Set<String> granted(List<HasMetadata> objects, String account) {
        return RenderedManifests.granted(objects, account);
    }

    /**
     * What {@code run} with these flags does with the API, through the real mapping ({@code toConfig}). File flags
     * point at empty stand-ins (the mapping only checks they exist); the node name is what the kubelet's
     * {@code NODE_NAME} or the agent's own pod would give.
     */
    private Set<Use> uses(List<String> args, boolean nodeNameFromApi) throws IOException {
        return RenderedManifests.uses(files, args, nodeNameFromApi, Map.of());
    }

    private static Set<String> declared(Set<Use> uses) {
        return RenderedManifests.declared(uses);
    }

    private static List<String> daemonSetArgs(List<HasMetadata> objects) {
        Container container = only(objects, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(container.getEnv()).anySatisfy(env -> assertThat(env.getName()).isEqualTo("NODE_NAME"));
        return expandedArgs(container, Map.of("PROXY_SERVER_HOST", "k.example.com", "PROXY_SERVER_PORT", "8132"));
    }

    /** The base is observe mode: its ClusterRole is exactly what the base DaemonSet's flags use, no pod writes. */
    @Test
    void baseClusterRoleIsExactlyWhatObserveModeUses() throws IOException {
        List<HasMetadata> objects = base();
        Set<Use> uses = uses(daemonSetArgs(objects), false);
        assertThat(uses).contains(Use.LOCK_CONTROLLER, Use.MANAGED_WEBHOOK_CONFIG, Use.WEBHOOK_QUOTA)
                .doesNotContain(Use.DEVICE_PLUGIN, Use.GPU_CAPACITY, Use.DEVICE_REGISTRATION);
        Set<String> granted = granted(objects, BASE_ACCOUNT);
        assertThat(granted).isEqualTo(declared(uses))
                .doesNotContain("core/pods:patch", "core/nodes/status:patch", "core/secrets:get");
        ClusterRoleBinding binding = only(objects, ClusterRoleBinding.class);
        assertThat(binding.getRoleRef().getName()).isEqualTo(only(objects, ClusterRole.class).getMetadata().getName());
    }

    /** Every declared permission is granted by some shipped mode, or is named here as flag-only. */
    @Test
    void everyDeclaredPermissionHasAMode() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        Set<String> shipped = new TreeSet<>(granted(base(), BASE_ACCOUNT));
        shipped.addAll(granted(parse(kustomize("overlays/simulated-gpus")), BASE_ACCOUNT));
        shipped.addAll(granted(parse(kustomize("overlays/real-gpus")), BASE_ACCOUNT));
        shipped.addAll(granted(parse(kustomize("overlays/kamaji")), KAMAJI_ACCOUNT));
        List<HasMetadata> kamajiNode = parse(kustomize("overlays/kamaji-node"));
        shipped.addAll(granted(kamajiNode, KAMAJI_ACCOUNT));
        shipped.addAll(granted(kamajiNode, NODE_ACCOUNT));
        Set<String> notShipped = new TreeSet<>(KubernetesPermissions.keys());
        notShipped.removeAll(shipped);
        // --count-server-leases is off in every manifest (README: add the leases rule with the flag).
        assertThat(notShipped).isEqualTo(declared(Set.of(Use.SERVER_LEASES)));
    }

    private static String kustomize(String overlay) throws IOException, InterruptedException {
        return RenderedManifests.kustomize(MANIFESTS.resolve(overlay));
    }

    @Test
    void overlaysRenderAndTheirArgumentsParse() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        List<HasMetadata> simulated = parse(kustomize("overlays/simulated-gpus"));
        Container container = only(simulated, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers()
                .get(0);
        AgentCommand run = parseRun(expandedArgs(container, Map.of("PROXY_SERVER_HOST", "k.example.com",
                "PROXY_SERVER_PORT", "8132")));
        assertThat(flag(run, "--device-source")).isEqualTo("mock");
        assertThat(flag(run, "--allocation-mode")).isEqualTo("device-plugin");
        assertThat(flag(run, "--device-plugin")).isEqualTo("true");
        assertThat(flag(run, "--mock-gpus")).isEqualTo("A100-80GB");

        // The device plugin with mock capacity: the components add pods patch and nodes/status patch.
        Set<Use> simulatedUses = uses(daemonSetArgs(simulated), false);
        assertThat(simulatedUses).contains(Use.DEVICE_PLUGIN, Use.GPU_CAPACITY, Use.DEVICE_REGISTRATION);
        assertThat(granted(simulated, BASE_ACCOUNT)).isEqualTo(declared(simulatedUses))
                .contains("core/pods:patch", "core/nodes/status:patch");
        assertDevicePluginMounts(only(simulated, DaemonSet.class), run);

        // Real GPUs: nvidia-smi, the device plugin, no capacity writes (kubelet advertises nvidia.com/gpu).
        List<HasMetadata> real = parse(kustomize("overlays/real-gpus"));
        DaemonSet realDaemonSet = only(real, DaemonSet.class);
        AgentCommand realRun = parseRun(expandedArgs(realDaemonSet.getSpec().getTemplate().getSpec().getContainers()
                .get(0), Map.of("PROXY_SERVER_HOST", "k.example.com", "PROXY_SERVER_PORT", "8132")));
        assertThat(flag(realRun, "--device-source")).isEqualTo("nvidia-smi");
        Set<Use> realUses = uses(daemonSetArgs(real), false);
        assertThat(realUses).contains(Use.DEVICE_PLUGIN, Use.DEVICE_REGISTRATION).doesNotContain(Use.GPU_CAPACITY);
        assertThat(granted(real, BASE_ACCOUNT)).isEqualTo(declared(realUses)).contains("core/pods:patch")
                .doesNotContain("core/nodes/status:patch");
        assertDevicePluginMounts(realDaemonSet, realRun);
        assertThat(realDaemonSet.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
                .anySatisfy(env -> assertThat(env.getName() + "=" + env.getValue())
                        .isEqualTo("NVIDIA_VISIBLE_DEVICES=all"));

        List<HasMetadata> kamaji = parse(kustomize("overlays/kamaji"));
        assertThat(kamaji).noneMatch(DaemonSet.class::isInstance);
        assertThat(kamaji).filteredOn(ClusterRoleBinding.class::isInstance).hasSize(2)
                .allSatisfy(b -> assertThat(((ClusterRoleBinding) b).getSubjects().get(0).getName())
                        .isEqualTo("konnectivity-agent"));
        assertThat(only(kamaji, RoleBinding.class).getSubjects().get(0).getName()).isEqualTo("konnectivity-agent");
        assertThat(only(kamaji, Service.class).getSpec().getSelector()).containsEntry("k8s-app", "konnectivity-agent");
        // Both policies (own node, the webhook's Secret) match Kamaji's agent, each with its binding.
        assertThat(kamaji).filteredOn(ValidatingAdmissionPolicy.class::isInstance).hasSize(2)
                .allSatisfy(p -> assertThat(((ValidatingAdmissionPolicy) p).getSpec().getMatchConditions().get(0)
                        .getExpression()).contains("'" + KAMAJI_ACCOUNT + "'"));
        assertThat(kamaji).filteredOn(ValidatingAdmissionPolicyBinding.class::isInstance)
                .extracting(b -> ((ValidatingAdmissionPolicyBinding) b).getSpec().getPolicyName())
                .containsExactlyInAnyOrder("tenant-gateway-own-node", "tenant-gateway-webhook-tls-secret");
        // Kamaji's DaemonSet: its own flags, our extraArgs, no NODE_NAME (the agent reads its pod).
        Set<Use> kamajiUses = uses(kamajiArgs(), true);
        assertThat(kamajiUses).contains(Use.WEBHOOK_TLS_SECRET, Use.WEBHOOK_TLS_SELF_MANAGED, Use.NODE_NAME_DISCOVERY,
                Use.LOCK_CONTROLLER)
                .doesNotContain(Use.DEVICE_PLUGIN, Use.GPU_CAPACITY);
        assertThat(granted(kamaji, KAMAJI_ACCOUNT)).isEqualTo(declared(kamajiUses))
                .contains("core/secrets:create", "core/secrets:update")
                .doesNotContain("core/pods:patch", "core/nodes/status:patch");
    }

    /**
     * {@code overlays/kamaji-node}: the Kamaji switch plus the node role. Per role, the account's ClusterRoles grant
     * exactly what its flags use: Kamaji's agent (its own flags and this overlay's patch, no NODE_NAME) only the
     * webhook's calls, no lock controller, no Node read or write by name; the node role's DaemonSet ({@code run
     * --tunnel=false}, NODE_NAME, real GPUs and the device plugin with its mounts) nothing of the webhook's or the
     * tunnel's. The own-node policy matches the node role, the only one writing Nodes; everything else is
     * {@code overlays/kamaji}'s.
     */
    @Test
    void theKamajiNodeOverlayRunsTheNodeRoleBesideKamajisAgentEachWithItsOwnLeastPrivilege() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        List<HasMetadata> objects = parse(kustomize("overlays/kamaji-node"));
        DaemonSet node = only(objects, DaemonSet.class);
        assertThat(node.getMetadata().getName()).isEqualTo("tenant-gateway-node");
        assertThat(node.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("tenant-gateway-node");
        Container container = node.getSpec().getTemplate().getSpec().getContainers().get(0);
        List<String> nodeArgs = container.getArgs();
        AgentCommand run = parseRun(nodeArgs);
        assertThat(flag(run, "--tunnel")).isEqualTo(false);
        assertThat(flag(run, "--device-source")).isEqualTo("nvidia-smi");
        assertThat(flag(run, "--device-plugin")).isEqualTo("true");
        assertThat(nodeArgs).noneMatch(a -> a.startsWith("--proxy-server") || a.startsWith("--ca-cert")
                || a.startsWith("--service-account-token-path") || a.startsWith("--webhook"));
        assertDevicePluginMounts(node, run);
        assertThat(container.getEnv()).anySatisfy(env -> assertThat(env.getValueFrom().getFieldRef().getFieldPath())
                .isEqualTo("spec.nodeName"));
        Object healthPort = flag(run, "--health-server-port");
        assertThat(container.getReadinessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(healthPort);
        AgentConfig nodeConfig = AgentCommand.parse(RenderedManifests.withStandIns(files.resolve("node"), nodeArgs,
                Map.of()).toArray(String[]::new)).toConfig();
        assertThat(nodeConfig.tunnel()).isEmpty();
        assertThat(Parts.enabled(nodeConfig)).extracting(part -> part.plan().name())
                .containsExactly("devices", "device-plugin", "lock-controller", "monitor");

        Set<Use> nodeUses = uses(nodeArgs, false);
        assertThat(nodeUses).contains(Use.DEVICE_REGISTRATION, Use.DEVICE_PLUGIN, Use.LOCK_CONTROLLER)
                .doesNotContain(Use.WEBHOOK_QUOTA, Use.NODE_NAME_DISCOVERY, Use.SERVER_LEASES, Use.GPU_CAPACITY);
        assertThat(granted(objects, NODE_ACCOUNT)).isEqualTo(declared(nodeUses)).contains("core/pods:patch")
                .noneMatch(key -> key.startsWith("admissionregistration.k8s.io/") || key.startsWith("core/secrets")
                        || key.startsWith("core/configmaps") || key.startsWith("core/resourcequotas"));

        List<String> kamajiArgs = kamajiArgs("overlays/kamaji-node");
        assertThat(kamajiArgs).contains("--enable-lock-controller=false")
                .noneMatch(a -> a.startsWith("--device") || a.startsWith("--allocation-mode"));
        Set<Use> kamajiUses = uses(kamajiArgs, true);
        assertThat(kamajiUses).contains(Use.WEBHOOK_TLS_SELF_MANAGED, Use.WEBHOOK_QUOTA)
                .doesNotContain(Use.LOCK_CONTROLLER, Use.NODE_NAME_DISCOVERY, Use.DEVICE_REGISTRATION);
        assertThat(granted(objects, KAMAJI_ACCOUNT)).isEqualTo(declared(kamajiUses))
                .doesNotContain("core/nodes:get", "core/nodes:patch", "core/pods:get", "core/pods:patch");

        assertThat(objects).filteredOn(ValidatingAdmissionPolicy.class::isInstance)
                .extracting(p -> p.getMetadata().getName() + ": " + ((ValidatingAdmissionPolicy) p).getSpec()
                        .getMatchConditions().get(0).getExpression())
                .containsExactlyInAnyOrder("tenant-gateway-own-node: request.userInfo.username == '" + NODE_ACCOUNT
                        + "'", "tenant-gateway-webhook-tls-secret: request.userInfo.username == '" + KAMAJI_ACCOUNT
                        + "'");
        // Besides the node role's objects and the two changes above, overlays/kamaji.
        List<HasMetadata> kamaji = parse(kustomize("overlays/kamaji"));
        assertThat(objects).extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
                .containsExactlyInAnyOrderElementsOf(Stream.concat(kamaji.stream()
                        .map(o -> o.getKind() + "/" + o.getMetadata().getName()), Stream.of(
                                "DaemonSet/tenant-gateway-node", "ServiceAccount/tenant-gateway-node",
                                "ClusterRole/tenant-gateway-node", "ClusterRoleBinding/tenant-gateway-node")).toList());
    }

    /**
     * {@code components/mock-devices} on {@code overlays/simulated-gpus}: simulated Hygon DCU and Ascend devices
     * after the simulated GPUs ({@code --mock-devices}, and {@code --enable-ascend} for the webhook's Ascend
     * backends), nothing else changed: the same objects and permissions as the overlay alone.
     */
    @Test
    void theMockDevicesComponentAddsOnlyItsTwoFlagsToSimulatedGpus() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        Path root = Files.createDirectories(files.resolve("mock-devices"));
        Files.writeString(root.resolve("kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                + "kind: Kustomization\nresources:\n  - "
                + root.relativize(MANIFESTS.resolve("overlays/simulated-gpus")) + "\ncomponents:\n  - "
                + root.relativize(MANIFESTS.resolve("components/mock-devices")) + "\n");
        List<HasMetadata> withDevices = parse(RenderedManifests.kustomize(root));
        List<HasMetadata> simulated = parse(kustomize("overlays/simulated-gpus"));

        List<String> args = only(withDevices, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers().get(0)
                .getArgs();
        List<String> simulatedArgs = only(simulated, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers()
                .get(0).getArgs();
        assertThat(args).containsExactlyElementsOf(Stream.concat(simulatedArgs.stream(),
                Stream.of("--mock-devices=Ascend910B4:2,DCU-K100:1", "--enable-ascend")).toList());
        assertThat(withDevices).hasSameSizeAs(simulated);
        assertThat(granted(withDevices, BASE_ACCOUNT)).isEqualTo(granted(simulated, BASE_ACCOUNT));
    }

    /**
     * {@code components/report-node-capacity} on each overlay that registers devices: {@code --report-node-capacity=true}
     * appended, and exactly the node-capacity role and binding added (nodes/status patch, what the flag's use
     * declares); the own-node policy's {@code reportCapacity} is the only variable changed (OwnNodePolicyCelTest
     * evaluates it).
     */
    @Test
    void theReportNodeCapacityComponentAddsItsFlagItsRoleAndThePolicysSwitch() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        for (String overlay : List.of("overlays/real-gpus", "overlays/simulated-gpus")) {
            String name = overlay.replace('/', '-') + "-node-capacity";
            List<HasMetadata> with = parse(RenderedManifests.kustomize(files.resolve(name),
                    List.of(overlay, "components/report-node-capacity"), null));
            List<HasMetadata> without = parse(kustomize(overlay));

            List<String> args = daemonSetArgs(with);
            List<String> expected = new ArrayList<>(daemonSetArgs(without));
            expected.add("--report-node-capacity=true");
            assertThat(args).as(name).isEqualTo(expected);
            Set<Use> uses = uses(args, false);
            assertThat(uses).as(name).contains(Use.NODE_CAPACITY, Use.DEVICE_REGISTRATION);
            assertThat(uses(daemonSetArgs(without), false)).as(overlay).doesNotContain(Use.NODE_CAPACITY);
            assertThat(granted(with, BASE_ACCOUNT)).as(name).isEqualTo(declared(uses))
                    .contains("core/nodes/status:patch");

            List<String> added = new ArrayList<>(with.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName())
                    .toList());
            without.forEach(o -> added.remove(o.getKind() + "/" + o.getMetadata().getName()));
            assertThat(added).as(name).containsExactlyInAnyOrder("ClusterRole/tenant-gateway-node-capacity",
                    "ClusterRoleBinding/tenant-gateway-node-capacity");
            assertThat(only(with, ClusterRole.class, "tenant-gateway-node-capacity").getRules()).singleElement()
                    .satisfies(rule -> {
                        assertThat(rule.getResources()).containsExactly("nodes/status");
                        assertThat(rule.getVerbs()).containsExactly("patch");
                    });
            var policy = only(with, ValidatingAdmissionPolicy.class).getSpec().getVariables();
            var before = only(without, ValidatingAdmissionPolicy.class).getSpec().getVariables();
            assertThat(policy).hasSameSizeAs(before);
            for (int i = 0; i < policy.size(); i++) {
                boolean reportCapacity = policy.get(i).getName().equals("reportCapacity");
                assertThat(policy.get(i).getExpression()).as(policy.get(i).getName())
                        .isEqualTo(reportCapacity ? "true" : before.get(i).getExpression());
            }
            assertThat(RenderedManifests.unused(with)).as(name).isEmpty();
        }
    }

    private static <T extends HasMetadata> T only(List<HasMetadata> objects, Class<T> type, String name) {
        return objects.stream().filter(type::isInstance).map(type::cast)
                .filter(o -> o.getMetadata().getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
    }

    /**
     * The device plugin component: kubelet's directory mounted where --device-plugin-dir points, HAMi-core's host
     * directories at their host paths (the allocator's host root is /), HAMi's vgpu-init.sh from HAMi's image.
     */
    private static void assertDevicePluginMounts(DaemonSet daemonSet, AgentCommand run) {
        var pod = daemonSet.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);
        Map<String, String> hostPaths = new java.util.HashMap<>();
        pod.getVolumes().stream().filter(v -> v.getHostPath() != null)
                .forEach(v -> hostPaths.put(v.getName(), v.getHostPath().getPath()));
        Map<String, String> mounted = new java.util.HashMap<>();
        container.getVolumeMounts().stream().filter(m -> hostPaths.containsKey(m.getName()))
                .forEach(m -> mounted.put(hostPaths.get(m.getName()), m.getMountPath()));
        assertThat(mounted)
                .containsEntry("/var/lib/kubelet/device-plugins", flag(run, "--device-plugin-dir").toString())
                .containsEntry("/usr/local/vgpu", "/usr/local/vgpu").containsEntry("/tmp/vgpulock", "/tmp/vgpulock");
        assertThat(flag(run, "--device-plugin-host-root")).hasToString("/");
        assertThat(pod.getInitContainers()).singleElement().satisfies(init -> {
            assertThat(init.getImage()).isEqualTo("docker.io/projecthami/hami:v2.10.0");
            assertThat(init.getCommand()).containsExactly("/bin/sh", "-c", "/k8s-vgpu/bin/vgpu-init.sh /usr/local/vgpu/");
            assertThat(init.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath())
                    .isEqualTo("/usr/local/vgpu"));
        });
        // kubelet's directory is root's (0750): the socket needs uid 0, nothing more.
        assertThat(pod.getSecurityContext().getRunAsUser()).isZero();
        assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    }

    /** Kamaji's own agent arguments followed by the TenantControlPlane patch's extraArgs. */
    private List<String> kamajiArgs() throws IOException {
        return kamajiArgs("overlays/kamaji");
    }

    /** {@link #kamajiArgs()} with the patch of {@code overlay}. */
    private List<String> kamajiArgs(String overlay) throws IOException {
        GenericKubernetesResource tcp = serialization.unmarshal(
                Files.readString(MANIFESTS.resolve(overlay).resolve("tenantcontrolplane-patch.yaml")),
                GenericKubernetesResource.class);
        @SuppressWarnings("unchecked")
        List<String> extraArgs = (List<String>) tcp.get("spec", "addons", "konnectivity", "agent", "extraArgs");
        List<String> args = new ArrayList<>(RenderedManifests.KAMAJI_AGENT_ARGS);
        args.addAll(extraArgs);
        return args;
    }

    /**
     * HAMi's vendor switches as components, as the chart's {@code devices.ascend.enabled} and
     * {@code devices.iluvatar.enabled}: each reaches the webhook's policy through the real CLI, alone or together, and
     * changes nothing else (the same objects, the same RBAC as the base).
     */
    @Test
    void vendorComponentsSwitchOnTheWebhooksAscendAndIluvatarBackendsAndNothingElse() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        List<HasMetadata> base = parse(kustomize("base"));
        List<String> baseArgs = daemonSetArgs(base);
        assertThat(policy(baseArgs, "base")).satisfies(p -> {
            assertThat(p.enableAscend()).isFalse();
            assertThat(p.enableIluvatar()).isFalse();
        });
        for (List<String> components : List.of(List.of("components/enable-ascend"),
                List.of("components/enable-iluvatar"), List.of("components/enable-ascend", "components/enable-iluvatar"))) {
            List<String> dirs = new ArrayList<>(List.of("base"));
            dirs.addAll(components);
            String name = String.join("+", dirs).replace('/', '-');
            List<HasMetadata> objects = parse(RenderedManifests.kustomize(files.resolve(name), dirs, null));
            List<String> args = daemonSetArgs(objects);
            boolean ascend = components.contains("components/enable-ascend");
            boolean iluvatar = components.contains("components/enable-iluvatar");

            List<String> expected = new ArrayList<>(baseArgs);
            if (ascend) {
                expected.add("--enable-ascend");
            }
            if (iluvatar) {
                expected.add("--enable-iluvatar");
            }
            assertThat(args).as(name).isEqualTo(expected);
            assertThat(policy(args, name)).as(name).satisfies(p -> {
                assertThat(p.enableAscend()).isEqualTo(ascend);
                assertThat(p.enableIluvatar()).isEqualTo(iluvatar);
            });
            assertThat(objects).extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
                    .containsExactlyElementsOf(base.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName())
                            .toList());
            assertThat(granted(objects, BASE_ACCOUNT)).as(name).isEqualTo(granted(base, BASE_ACCOUNT))
                    .isEqualTo(declared(uses(args, false)));
        }
    }

    /** The webhook's policy {@code run} with these arguments builds. */
    private io.tenantgateway.webhook.policy.PolicyConfig policy(List<String> args, String name) throws IOException {
        return AgentCommand.parse(RenderedManifests.withStandIns(files.resolve(name + "-files"), args, Map.of())
                .toArray(String[]::new)).toConfig().webhook().orElseThrow().config().policy();
    }

    @Test
    void kamajiSwitchExtraArgsParseAfterKamajisOwnArguments() throws IOException {
        AgentCommand run = parseRun(kamajiArgs());
        assertThat(flag(run, "--webhook-tls-secret")).isEqualTo("kube-system/tenant-gateway-webhook-tls");
        assertThat(flag(run, "--webhook-tls-self-managed")).isEqualTo(true);
        // The self-managed certificate is for the Service the webhook configuration calls.
        Service service = only(parse(Files.readString(MANIFESTS.resolve("base/service.yaml"))), Service.class);
        assertThat(flag(run, "--webhook-service")).isEqualTo(service.getMetadata().getNamespace() + "/"
                + service.getMetadata().getName());
        assertThat(flag(run, "--health-server-port")).isEqualTo(8134);
    }

    // --- install: nothing unused, the image, the TenantControlPlane's name --------------------------------------

    /**
     * Every object each overlay (and the base with each optional component) renders is used by another one there or
     * is one the deployment is for (RenderedManifests.unused): no ConfigMap left behind without its DaemonSet (the
     * kamaji overlay deletes the base's), no unbound role or policy, no Service nothing calls. The check bites: the
     * base without its DaemonSet leaves its ConfigMap and ServiceAccount unused.
     */
    @Test
    void everyObjectAnOverlayRendersIsUsed() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        for (String overlay : List.of("base", "overlays/real-gpus", "overlays/simulated-gpus", "overlays/kamaji",
                "overlays/kamaji-node")) {
            assertThat(RenderedManifests.unused(parse(kustomize(overlay)))).as(overlay).isEmpty();
        }
        for (String component : List.of("components/servicemonitor", "components/enable-ascend",
                "components/webhook-tls-secret")) {
            String name = component.replace('/', '-');
            assertThat(RenderedManifests.unused(parse(RenderedManifests.kustomize(files.resolve(name),
                    List.of("base", component), null)))).as("base + " + component).isEmpty();
        }
        List<HasMetadata> withoutDaemonSet = parse(kustomize("base")).stream()
                .filter(o -> !(o instanceof DaemonSet)).toList();
        assertThat(RenderedManifests.unused(withoutDaemonSet)).hasSize(2)
                .anySatisfy(u -> assertThat(u).matches("ConfigMap kube-system/tenant-gateway-\\w{10}"))
                .contains("ServiceAccount kube-system/tenant-gateway");
    }

    /** The kustomization README.md's "Install" shows: our overlay, the agent's image replaced, the address merged. */
    @Test
    void theReadmesKustomizationSetsTheAgentsImageAndTheServerAddress() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        String readme = Files.readString(MANIFESTS.resolve("README.md"));
        java.util.regex.Matcher block = java.util.regex.Pattern.compile(
                "```yaml\n(# my-tenant-gateway/kustomization.yaml\n.*?)```", java.util.regex.Pattern.DOTALL)
                .matcher(readme);
        assertThat(block.find()).as("manifests/README.md: the my-tenant-gateway kustomization").isTrue();
        Path root = Files.createDirectories(files.resolve("my-tenant-gateway"));
        String resource = "../tenant-gateway/manifests/overlays/real-gpus";
        assertThat(block.group(1)).contains("  - " + resource + " ");
        Files.writeString(root.resolve("kustomization.yaml"), block.group(1).replace(resource,
                root.toAbsolutePath().relativize(MANIFESTS.resolve("overlays/real-gpus").toAbsolutePath()).toString()));
        List<HasMetadata> objects = parse(RenderedManifests.kustomize(root));

        // images[].name is the manifests' image without its tag.
        Container base = only(base(), DaemonSet.class).getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(block.group(1)).contains("  - name: " + base.getImage().substring(0, base.getImage()
                .lastIndexOf(':')) + "\n");
        var pod = only(objects, DaemonSet.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getContainers().get(0).getImage()).isEqualTo("registry.example.com/platform/tenant-gateway:0.1.0");
        assertThat(pod.getInitContainers()).singleElement().satisfies(init -> assertThat(init.getImage())
                .isEqualTo("docker.io/projecthami/hami:v2.10.0"));
        io.fabric8.kubernetes.api.model.ConfigMap config = only(objects, io.fabric8.kubernetes.api.model.ConfigMap.class);
        assertThat(config.getData()).containsEntry("proxy-server-host", "konnectivity.tenant-a.example.com")
                .containsEntry("proxy-server-port", "8132");
        assertThat(pod.getContainers().get(0).getEnv()).filteredOn(e -> e.getName().equals("PROXY_SERVER_HOST"))
                .singleElement().satisfies(e -> assertThat(e.getValueFrom().getConfigMapKeyRef().getName())
                        .isEqualTo(config.getMetadata().getName()));
        assertThat(RenderedManifests.unused(objects)).isEmpty();
    }

    private static final String TCP_PLACEHOLDER = "TENANT_CONTROL_PLANE_NAME";

    /**
     * The TenantControlPlane patch names its target by a placeholder that no object can have (not a DNS-1123 name:
     * a patch still carrying it fails), which manifests/README.md names; its substitution there gives the name.
     */
    @Test
    void theTenantControlPlanePatchTakesTheNameGivenForItsPlaceholder() throws IOException {
        String file = Files.readString(MANIFESTS.resolve("overlays/kamaji/tenantcontrolplane-patch.yaml"));
        GenericKubernetesResource patch = serialization.unmarshal(file, GenericKubernetesResource.class);
        assertThat(patch.getMetadata().getName()).isEqualTo(TCP_PLACEHOLDER)
                .doesNotMatch("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
        assertThat(patch.getMetadata().getNamespace()).as("the namespace is kubectl's -n").isNull();
        String readme = Files.readString(MANIFESTS.resolve("README.md"));
        assertThat(readme).contains("sed \"s/" + TCP_PLACEHOLDER + "/$TCP/\" "
                + "manifests/overlays/kamaji/tenantcontrolplane-patch.yaml > tcp-patch.yaml");

        GenericKubernetesResource substituted = serialization.unmarshal(file.replace(TCP_PLACEHOLDER, "tenant-x"),
                GenericKubernetesResource.class);
        assertThat(substituted.getMetadata().getName()).isEqualTo("tenant-x");
        assertThat(substituted.getAdditionalProperties()).isEqualTo(patch.getAdditionalProperties());
        assertThat(serialization.asYaml(substituted)).doesNotContain("TENANT_CONTROL_PLANE");
    }

    /**
     * The patch as a kustomize patch of a TenantControlPlane kept in a kustomization (manifests/README.md, "Kamaji"):
     * the target's name wins over the placeholder, the agent gets the patch's image, version, tolerations and
     * extraArgs, and the TenantControlPlane's other fields stay.
     */
    @Test
    @SuppressWarnings("unchecked")
    void asAKustomizePatchItKeepsTheTenantControlPlanesNameAndOtherFields() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        Path root = Files.createDirectories(files.resolve("management"));
        Files.copy(MANIFESTS.resolve("overlays/kamaji/tenantcontrolplane-patch.yaml"),
                root.resolve("tenantcontrolplane-patch.yaml"));
        Files.writeString(root.resolve("tenantcontrolplane.yaml"), """
                apiVersion: kamaji.clastix.io/v1alpha1
                kind: TenantControlPlane
                metadata:
                  name: tenant-x
                  namespace: tenants
                spec:
                  controlPlane:
                    deployment:
                      replicas: 2
                  kubernetes:
                    version: v1.32.0
                  addons:
                    konnectivity:
                      server:
                        port: 8132
                      agent:
                        hostNetwork: false
                        extraArgs: [--v=4]
                """);
        Files.writeString(root.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - tenantcontrolplane.yaml
                patches:
                  - path: tenantcontrolplane-patch.yaml
                    target:
                      kind: TenantControlPlane
                      name: tenant-x
                """);
        List<HasMetadata> rendered = parse(RenderedManifests.kustomize(root));
        assertThat(rendered).hasSize(1);
        Map<String, Object> tcp = RenderedManifests.tree(rendered.get(0));
        assertThat(rendered.get(0).getMetadata().getName()).isEqualTo("tenant-x");
        assertThat(rendered.get(0).getMetadata().getNamespace()).isEqualTo("tenants");
        Map<String, Object> spec = (Map<String, Object>) tcp.get("spec");
        Map<String, Object> konnectivity = (Map<String, Object>) ((Map<String, Object>) spec.get("addons"))
                .get("konnectivity");
        Map<String, Object> agent = (Map<String, Object>) konnectivity.get("agent");
        GenericKubernetesResource patch = serialization.unmarshal(Files.readString(
                root.resolve("tenantcontrolplane-patch.yaml")), GenericKubernetesResource.class);
        Map<String, Object> patched = (Map<String, Object>) patch.get("spec", "addons", "konnectivity", "agent");
        assertThat(agent).containsAllEntriesOf(patched).containsEntry("hostNetwork", false);
        assertThat(agent.get("extraArgs")).isEqualTo(patched.get("extraArgs"));
        assertThat(konnectivity).containsEntry("server", Map.of("port", 8132));
        assertThat(spec).containsEntry("controlPlane", Map.of("deployment", Map.of("replicas", 2)))
                .containsEntry("kubernetes", Map.of("version", "v1.32.0"));
    }
}
