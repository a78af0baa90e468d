package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.tenantgateway.agent.testing.MockApiKubeconfig;
import io.tenantgateway.agent.testing.WebhookHttps;
import io.tenantgateway.certs.testing.TestPki;
import io.tenantgateway.webhook.WebhookServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tenant-gateway webhook --kubeconfig}: the standalone webhook checks ResourceQuotas the way {@code run} does
 * (the agent's {@code KubernetesQuotaLookup}) and follows HAMi's device ConfigMap, against fabric8's CRUD mock API.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@EnableKubernetesMockClient(crud = true, https = false)
class WebhookCommandApiIT {
    static KubernetesMockServer server;
    static KubernetesClient client;

    @TempDir
    Path dir;

    private static String gpuPod(String name, int memory) {
        return "{'metadata':{'name':'" + name + "','namespace':'team-q'},'spec':{'containers':[{'name':'c',"
                + "'resources':{'limits':{'nvidia.com/gpumem':'" + memory + "'}}}]}}";
    }

    private static String dcuPod(String name, int memory) {
        return "{'metadata':{'name':'" + name + "','namespace':'team-q'},'spec':{'containers':[{'name':'c',"
                + "'resources':{'limits':{'example.com/dcu':'1','example.com/dcumem':'" + memory + "'}}}]}}";
    }

    @Test
    void kubeconfigEnablesTheQuotaCheckAndTheDeviceConfigMap() throws Exception {
        // HAMi's quota: 4000 MiB of device memory in team-q, 3000 held by a running pod (as the scheduler wrote it).
        client.resourceQuotas().inNamespace("team-q").resource(new ResourceQuotaBuilder().withNewMetadata()
                .withName("gpu").endMetadata().withNewSpec().addToHard("limits.nvidia.com/gpumem", new Quantity("4000"))
                .endSpec().build()).create();
        client.pods().inNamespace("team-q").resource(new PodBuilder().withNewMetadata().withName("running")
                .addToAnnotations("hami.io/vgpu-devices-allocated", "GPU-a,NVIDIA,3000,0:;").endMetadata()
                .withNewSpec().addNewContainer().withName("c").withImage("cuda").endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus().build()).create();
        client.configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder().withNewMetadata()
                .withName("hami-scheduler-device").endMetadata()
                .addToData("device-config.yaml", "nvidia:\n  resourceCountName: example.com/gpu\n"
                        + "hygon:\n  resourceCountName: example.com/dcu\n  resourceMemoryName: example.com/dcumem\n"
                        + "  resourceCoreName: example.com/dcucores\n").build()).create();
        // Another vendor, renamed by the ConfigMap: 1000 MiB of Hygon memory, 600 held (in Hygon's own annotation).
        client.resourceQuotas().inNamespace("team-q").resource(new ResourceQuotaBuilder().withNewMetadata()
                .withName("dcu").endMetadata().withNewSpec().addToHard("limits.example.com/dcumem", new Quantity("1000"))
                .endSpec().build()).create();
        client.pods().inNamespace("team-q").resource(new PodBuilder().withNewMetadata().withName("running-dcu")
                .addToAnnotations("hami.io/dcu-devices-allocated", "DCU-a,DCU,600,100:;").endMetadata()
                .withNewSpec().addNewContainer().withName("c").withImage("rocm").endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus().build()).create();

        TestPki pki = TestPki.create("standalone");
        TestPki.Files files = pki.writeTo(dir);
        String kubeconfig = MockApiKubeconfig.write(dir, client).toString();
        WebhookInBackground command = WebhookInBackground.start("--listen", "127.0.0.1:0",
                "--tls-cert", files.serverCert().toString(), "--tls-key", files.serverKey().toString(),
                "--kubeconfig", kubeconfig);
        WebhookServer started = command.started(30);
        WebhookHttps webhook = new WebhookHttps(pki);

        // 3000 used + 2000 > 4000: HAMi's denial, once the quota and the namespace's pods are listed.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            WebhookHttps.Answer over = webhook.admitPod(started.port(), "team-q", gpuPod("over", 2000));
            assertThat(over.allowed()).isFalse();
            assertThat(over.response().path("status").path("code").asInt()).isEqualTo(403);
            assertThat(over.message()).isEqualTo("exceeding resource quota");
        });
        // 3000 + 1000 = 4000: fits; and the count is the ConfigMap's resourceCountName.
        WebhookHttps.Answer under = webhook.admitPod(started.port(), "team-q", gpuPod("under", 1000));
        assertThat(under.allowed()).as(under.response().toString()).isTrue();
        assertThat(under.patch()).contains("/limits/example.com~1gpu\",\"value\":\"1\"");

        // Hygon under its configured names: 600 used + 500 > 1000 is denied, 600 + 400 fits.
        WebhookHttps.Answer dcuOver = webhook.admitPod(started.port(), "team-q", dcuPod("dcu-over", 500));
        assertThat(dcuOver.message()).as(dcuOver.response().toString()).isEqualTo("exceeding resource quota");
        WebhookHttps.Answer dcuUnder = webhook.admitPod(started.port(), "team-q", dcuPod("dcu-under", 400));
        assertThat(dcuUnder.allowed()).as(dcuUnder.response().toString()).isTrue();
        assertThat(command.out()).contains("quota check: on (ResourceQuotas from " + client.getMasterUrl(),
                "device config: ConfigMap kube-system/hami-scheduler-device (changes apply live)")
                .doesNotContain("quota check: off");

        assertThat(command.stop()).as(command.err()).isZero();
    }
}
