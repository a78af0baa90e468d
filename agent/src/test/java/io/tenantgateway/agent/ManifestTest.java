package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.webhook.WebhookConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The manifests agree with the code: every YAML parses, the DaemonSet's arguments parse with the real CLI, ports
 * and paths match, and the ClusterRole is exactly {@link KubernetesPermissions}.
 */
class ManifestTest {
    private static final Path MANIFESTS = Path.of(System.getProperty("user.dir")).resolve("../manifests").normalize();
    private final KubernetesSerialization serialization = new KubernetesSerialization();

    private List<HasMetadata> parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (!document.isBlank()) {
                objects.add(serialization.unmarshal(document));
            }
        }
        return objects;
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
        List<T> matches = objects.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(matches).as(type.getSimpleName()).hasSize(1);
        return matches.get(0);
    }

    @Test
    void everyYamlParses() throws IOException {
        try (Stream<Path> files = Files.walk(MANIFESTS)) {
            List<Path> yamls = files.filter(f -> f.toString().endsWith(".yaml")).toList();
            assertThat(yamls).hasSizeGreaterThanOrEqualTo(9);
            for (Path file : yamls) {
                Object parsed = serialization.unmarshal(Files.readString(file), Object.class);
                assertThat(parsed).as(file.toString()).isNotNull();
            }
        }
        assertThat(base()).extracting(HasMetadata::getKind).contains("ServiceAccount", "ClusterRole",
                "ClusterRoleBinding", "DaemonSet", "Service", "MutatingWebhookConfiguration");
    }

    /** Arguments as the kubelet passes them: $(VAR) references expanded from the container's env. */
    private static List<String> expandedArgs(Container container, Map<String, String> values) {
        return container.getArgs().stream().map(arg -> {
            String expanded = arg;
            for (Map.Entry<String, String> value : values.entrySet()) {
                expanded = expanded.replace("$(" + value.getKey() + ")", value.getValue());
            }
            return expanded;
        }).toList();
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

        assertThat(run.proxyServerHost).isEqualTo("konnectivity.example.com");
        assertThat(run.proxyServerPort).isEqualTo(8132);
        assertThat(run.caCert).hasToString("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
        assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(container.getLivenessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(run.healthServerPort);
        assertThat(container.getReadinessProbe().getHttpGet().getPort().getIntVal()).isEqualTo(run.healthServerPort);
        int webhookPort = Integer.parseInt(AgentConfigMapper.hostPort("--webhook-listen", run.webhookListen)[1]);
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
        assertThat(Path.of("/var/run/secrets/tokens", token.getPath())).isEqualTo(run.serviceAccountTokenPath);
        assertThat(container.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath())
                .isEqualTo(run.webhookTlsCert.getParent().toString()));

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

    @Test
    void clusterRoleIsExactlyTheDeclaredPermissions() throws IOException {
        List<HasMetadata> objects = base();
        ClusterRole role = only(objects, ClusterRole.class);
        Set<String> granted = new TreeSet<>();
        role.getRules().forEach(rule -> rule.getApiGroups().forEach(group -> rule.getResources()
                .forEach(resource -> rule.getVerbs().forEach(verb -> granted.add(
                        (group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb)))));
        assertThat(granted).isEqualTo(KubernetesPermissions.keys());
        ClusterRoleBinding binding = only(objects, ClusterRoleBinding.class);
        assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    }

    private static String kustomize(String overlay) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("kubectl", "kustomize", MANIFESTS.resolve(overlay).toString())
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    @Test
    void overlaysRenderAndTheirArgumentsParse() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(JarProcess.onPath("kubectl"), "kubectl renders kustomize");
        List<HasMetadata> simulated = parse(kustomize("overlays/simulated-gpus"));
        Container container = only(simulated, DaemonSet.class).getSpec().getTemplate().getSpec().getContainers()
                .get(0);
        AgentCommand run = parseRun(expandedArgs(container, Map.of("PROXY_SERVER_HOST", "k.example.com",
                "PROXY_SERVER_PORT", "8132")));
        assertThat(run.deviceSource).isEqualTo("mock");
        assertThat(run.allocationMode).isEqualTo("complete");
        assertThat(run.mockGpus).isEqualTo("A100-80GB");

        List<HasMetadata> kamaji = parse(kustomize("overlays/kamaji"));
        assertThat(kamaji).noneMatch(DaemonSet.class::isInstance);
        assertThat(only(kamaji, ClusterRoleBinding.class).getSubjects().get(0).getName()).isEqualTo("konnectivity-agent");
        assertThat(only(kamaji, Service.class).getSpec().getSelector()).containsEntry("k8s-app", "konnectivity-agent");
    }

    @Test
    void kamajiSwitchExtraArgsParseAfterKamajisOwnArguments() throws IOException {
        GenericKubernetesResource tcp = serialization.unmarshal(
                Files.readString(MANIFESTS.resolve("overlays/kamaji/tenantcontrolplane-patch.yaml")),
                GenericKubernetesResource.class);
        @SuppressWarnings("unchecked")
        List<String> extraArgs = (List<String>) tcp.get("spec", "addons", "konnectivity", "agent", "extraArgs");
        List<String> args = new ArrayList<>(List.of("run", "-v=8", "--logtostderr=true",
                "--ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                "--proxy-server-host=tenant-a.example.com", "--proxy-server-port=8132", "--admin-server-port=8133",
                "--health-server-port=8134",
                "--service-account-token-path=/var/run/secrets/tokens/konnectivity-agent-token"));
        args.addAll(extraArgs);
        AgentCommand run = parseRun(args);
        assertThat(run.webhookTlsSecret).isEqualTo("kube-system/tenant-gateway-webhook-tls");
        assertThat(run.healthServerPort).isEqualTo(8134);
    }
}
