package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.TunnelTestbed;
import io.tenantgateway.agent.testing.WebhookHttps;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook of a running agent follows HAMi's device ConfigMap in fabric8's CRUD mock API: a renamed
 * {@code resourceCountName} is used by the next admissions, without a restart; a broken version keeps the last good
 * config with a Warning Event, the metric and the readiness detail. The same agent reports HAMi's own webhook
 * configuration next to ours, at start and when another appears.
 */
@Timeout(120)
@EnableKubernetesMockClient(crud = true, https = false)
class DeviceConfigAndHamiWebhookIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;
    @AutoClose
    private TunnelTestbed testbed;
    @AutoClose
    private Agent agent;

    private static final String SHARE_ONLY = "{'metadata':{'name':'share'},'spec':{'containers':[{'name':'c',"
            + "'resources':{'limits':{'nvidia.com/gpumem':'3000'}}}]}}";

    private static final String DCU_ONLY = "{'metadata':{'name':'dcu'},'spec':{'containers':[{'name':'c',"
            + "'resources':{'limits':{'example.com/dcu':'1'}}}]}}";

    private void writeDeviceConfig(String yaml) {
        client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withNamespace("kube-system")
                .withName("hami-scheduler-device").endMetadata().addToData("device-config.yaml", yaml).build())
                .createOr(existing -> existing.update());
    }

    private static MutatingWebhookConfiguration hamiWebhook(String name) {
        return new MutatingWebhookConfigurationBuilder().withNewMetadata().withName(name).endMetadata()
                .addNewWebhook().withName("vgpu.hami.io").withNewClientConfig().withNewService()
                    .withName("hami-scheduler").withNamespace("kube-system").withPath("/webhook").endService()
                .endClientConfig().addNewRule().withApiGroups("").withApiVersions("v1").withOperations("CREATE")
                    .withResources("pods").endRule().endWebhook().build();
    }

    private List<Event> events(String namespace, String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }

    private String metrics() throws Exception {
        return LoopbackHttp.get(agent.health().orElseThrow().boundPort(), "/metrics").body();
    }

    private String readiness() throws Exception {
        return LoopbackHttp.get(agent.health().orElseThrow().boundPort(), "/readyz?verbose").body();
    }

    @Test
    void deviceConfigFollowsTheConfigMapAndHamisWebhookIsReported() throws Exception {
        writeDeviceConfig("nvidia:\n  resourceCountName: nvidia.com/vgpu\n  resourceMemoryName: nvidia.com/gpumem\n");
        client.admissionRegistration().v1().mutatingWebhookConfigurations().resource(hamiWebhook("hami-webhook"))
                .create();
        // Ours, with the same entry name, is never reported.
        client.admissionRegistration().v1().mutatingWebhookConfigurations()
                .resource(hamiWebhook(AgentCommand.DEFAULT_WEBHOOK_CONFIG_NAME)).create();

        testbed = new TunnelTestbed(dir);
        List<String> args = testbed.webhookArgs(0);
        args.add("--kubeconfig=" + MockApiKubeconfig.write(dir, client));
        agent = new Agent(AgentCommand.parse(args.toArray(String[]::new)).toConfig(), Clock.systemUTC());
        agent.start();
        int port = PartViews.webhook(agent).orElseThrow().port();
        WebhookHttps webhook = new WebhookHttps(testbed.pki);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(readiness()).contains("[+]webhook-device-config ok\n"));
        // The case: with the cluster's resourceCountName the count is nvidia.com/vgpu, never nvidia.com/gpu.
        WebhookHttps.Answer renamed = webhook.admitPod(port, "team-a", SHARE_ONLY);
        assertThat(renamed.allowed()).isTrue();
        assertThat(renamed.patch()).contains("/limits/nvidia.com~1vgpu\",\"value\":\"1\"")
                .doesNotContain("nvidia.com~1gpu\"").contains("\"/spec/schedulerName\"");

        // HAMi's configuration was there at start: one Warning Event naming the fix, the gauge at 1.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<Event> conflicts = events("default", "HamiWebhookConflict");
            assertThat(conflicts).hasSize(1);
            assertThat(conflicts.get(0).getType()).isEqualTo("Warning");
            assertThat(conflicts.get(0).getInvolvedObject().getName()).isEqualTo("hami-webhook");
            assertThat(conflicts.get(0).getMessage()).contains("MutatingWebhookConfiguration hami-webhook serves"
                    + " HAMi's webhook (entry vgpu.hami.io)", "--set scheduler.admissionWebhook.enabled=false",
                    "kubectl delete mutatingwebhookconfiguration hami-webhook");
            assertThat(metrics()).contains("tenant_gateway_hami_webhook_conflicts 1.0");
        });

        // A live change: the very next admissions use the new name.
        writeDeviceConfig("nvidia:\n  resourceCountName: example.com/gpu\n");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(webhook.admitPod(port, "team-a",
                SHARE_ONLY).patch()).contains("/limits/example.com~1gpu\",\"value\":\"1\""));
        assertThat(metrics()).contains("tenant_gateway_device_config_reloads_total{result=\"applied\"} 2.0",
                "tenant_gateway_device_config_invalid 0.0");

        // Another vendor's block changes: a pod that asks for the renamed Hygon count becomes HAMi's at the next
        // admission (a file without the hygon block names no Hygon resource, as in HAMi).
        assertThat(webhook.admitPod(port, "team-a", DCU_ONLY).patch()).as("no hygon block yet").isEmpty();
        writeDeviceConfig("nvidia:\n  resourceCountName: example.com/gpu\nhygon:\n  resourceCountName: example.com/dcu\n"
                + "  resourceMemoryName: example.com/dcumem\n  resourceCoreName: example.com/dcucores\n");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(webhook.admitPod(port, "team-a",
                DCU_ONLY).patch()).contains("\"/spec/schedulerName\"", "\"value\":\"hami-scheduler\""));

        // A broken version: the last good config stays; Event, metric and readiness detail name the error.
        writeDeviceConfig("nvidia: {\n");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<Event> rejected = events("kube-system", "DeviceConfigRejected");
            assertThat(rejected).hasSize(1);
            assertThat(rejected.get(0).getType()).isEqualTo("Warning");
            assertThat(rejected.get(0).getInvolvedObject().getName()).isEqualTo("hami-scheduler-device");
            assertThat(rejected.get(0).getMessage()).startsWith("ConfigMap kube-system/hami-scheduler-device"
                    + " data.device-config.yaml: not valid YAML: ")
                    .endsWith("; the webhook keeps the last valid version");
            assertThat(metrics()).contains("tenant_gateway_device_config_invalid 1.0",
                    "tenant_gateway_device_config_reloads_total{result=\"rejected\"} 1.0",
                    "tenant_gateway_device_config_rejected_total{reason=\"not_yaml\"} 1.0");
        });
        assertThat(readiness()).contains("[+]webhook-device-config ok (newest version rejected (not_yaml): ConfigMap"
                + " kube-system/hami-scheduler-device data.device-config.yaml: not valid YAML: ");
        assertThat(webhook.admitPod(port, "team-a", SHARE_ONLY).patch()).as("last good config in use")
                .contains("/limits/example.com~1gpu\",\"value\":\"1\"");

        // Fixed again: the metric clears; another HAMi configuration appears: reported on change.
        writeDeviceConfig("nvidia:\n  resourceCountName: example.com/gpu\n  overwriteEnv: true\n");
        client.admissionRegistration().v1().mutatingWebhookConfigurations().resource(hamiWebhook("gpu-sharing"))
                .create();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(metrics()).contains("tenant_gateway_device_config_invalid 0.0",
                    "tenant_gateway_hami_webhook_conflicts 2.0");
            assertThat(events("default", "HamiWebhookConflict")).extracting(e -> e.getInvolvedObject().getName())
                    .containsExactlyInAnyOrder("hami-webhook", "gpu-sharing");
        });
        assertThat(readiness()).contains("[+]webhook-device-config ok\n");
    }
}
