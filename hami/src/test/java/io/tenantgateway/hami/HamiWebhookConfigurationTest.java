package io.tenantgateway.hami;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.hami.HamiWebhookConfiguration.Entry;
import java.util.List;
import org.junit.jupiter.api.Test;

class HamiWebhookConfigurationTest {

    @Test
    void hamisChartConfigurationIsRecognisedByEntryName() {
        assertThat(HamiWebhookConfiguration.servesHami("hami-webhook",
                List.of(new Entry("vgpu.hami.io", "hami-scheduler", "", true)))).contains("entry vgpu.hami.io");
        // Renamed release, same entry.
        assertThat(HamiWebhookConfiguration.servesHami("gpu-webhook",
                List.of(new Entry("vgpu.hami.io", "", "https://10.0.0.5:443/webhook", true))))
                .contains("entry vgpu.hami.io");
    }

    @Test
    void hamisRulesUnderItsNameOrServiceAreRecognised() {
        assertThat(HamiWebhookConfiguration.servesHami("hami-webhook",
                List.of(new Entry("pods.example.io", "other", "", true))))
                .contains("entry pods.example.io mutates pod CREATE in HAMi's configuration name");
        assertThat(HamiWebhookConfiguration.servesHami("custom",
                List.of(new Entry("gpu.example.io", "hami-scheduler", "", true))))
                .contains("entry gpu.example.io sends pod CREATE to HAMi's hami-scheduler");
        assertThat(HamiWebhookConfiguration.servesHami("custom", List.of(new Entry("gpu.example.io", "", 
                "https://hami-scheduler.kube-system.svc:443/webhook", true)))).isPresent();
    }

    @Test
    void otherPodMutatorsAreNotHamis() {
        assertThat(HamiWebhookConfiguration.servesHami("istio-sidecar-injector",
                List.of(new Entry("sidecar-injector.istio.io", "istiod", "", true)))).isEmpty();
        assertThat(HamiWebhookConfiguration.servesHami("hami-webhook",
                List.of(new Entry("deployments.example.io", "", "", false)))).as("no pod CREATE rule").isEmpty();
        assertThat(HamiWebhookConfiguration.servesHami("custom",
                List.of(new Entry("x.example.io", "not-hami-scheduler", "https://hami-scheduler-proxy/x", true))))
                .isEmpty();
    }

    @Test
    void theFixNamesTheChartValueAndTheConfiguration() {
        assertThat(HamiWebhookConfiguration.fix("hami-webhook"))
                .contains("--set scheduler.admissionWebhook.enabled=false")
                .contains("kubectl delete mutatingwebhookconfiguration hami-webhook");
    }
}
