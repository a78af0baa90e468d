package io.tenantgateway.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ConfigTest {

    @Test
    void webhookConfigDefaultsAndValidation() {
        WebhookConfig config = WebhookConfig.builder().build();
        assertThat(config.port()).isEqualTo(9443);
        assertThat(config.path()).isEqualTo("/webhook");
        assertThat(config.maxRequestBytes()).as("kube-apiserver's 3 MiB plus 256 KiB of review")
                .isEqualTo(3 * 1024 * 1024 + 256 * 1024);
        assertThat(config.policy().schedulerName()).isEqualTo("hami-scheduler");
        assertThat(config.policy().forceOverwriteDefaultScheduler()).isTrue();
        assertThat(config.proxiesAdmissionPath()).isFalse();

        assertThatThrownBy(() -> WebhookConfig.builder().port(70000).build())
                .hasMessage("--listen: port 70000 (expected: 0..65535)");
        assertThatThrownBy(() -> WebhookConfig.builder().host(" ").build())
                .hasMessage("--listen: host '' (expected: an address such as 0.0.0.0)");
        assertThatThrownBy(() -> WebhookConfig.builder().maxRequestBytes(0).build())
                .hasMessage("maxRequestBytes: 0 (expected: > 0)");
    }

    @Test
    void upstreamConfigValidation() {
        URI hami = URI.create("https://hami-scheduler.kube-system.svc:443/webhook");
        UpstreamConfig upstream = UpstreamConfig.of(hami);
        assertThat(upstream.timeout()).isEqualTo(Duration.ofSeconds(9));
        assertThat(upstream.failurePolicy()).isEqualTo(FailurePolicy.FAIL_CLOSED);
        assertThat(WebhookConfig.builder().upstream(upstream).build().proxiesAdmissionPath()).isTrue();
        assertThat(WebhookConfig.builder().upstream(upstream.withPath("/hami")).build().proxiesAdmissionPath())
                .isFalse();

        assertThatThrownBy(() -> UpstreamConfig.of(URI.create("http://hami-scheduler/webhook")))
                .hasMessage("--upstream: 'http://hami-scheduler/webhook' (expected: an https:// URL with a host,"
                        + " e.g. https://hami-scheduler.kube-system.svc:443/webhook)");
        assertThatThrownBy(() -> upstream.withTimeout(Duration.ofSeconds(10)))
                .hasMessage("--upstream-timeout: 10s (expected: > 0 and < 10s, so the answer reaches the API server"
                        + " before its own timeout)");
        assertThatThrownBy(() -> FailurePolicy.parse("retry"))
                .hasMessage("--upstream-failure-policy: 'retry' (expected: one of fail-closed, fail-open, fallback)");
        assertThat(GoDuration.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(GoDuration.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
    }

    @Test
    void recentAdmissionsKeepsTheNewestWithinCapacity() {
        RecentAdmissions recent = new RecentAdmissions(2);
        Instant now = Clock.systemUTC().instant();
        for (int i = 0; i < 5; i++) {
            recent.add(new AdmissionRecord(now, "uid-" + i, "ns", "pod-" + i, "CREATE",
                    AdmissionRecord.Route.BUILT_IN, "allowed", 200, "", 1, 0, Duration.ofMillis(2)));
        }

        assertThat(recent.snapshot()).extracting(AdmissionRecord::uid).containsExactly("uid-4", "uid-3");
        assertThat(recent.total()).isEqualTo(5);
        assertThat(recent.toJson()).contains("\"capacity\":2", "\"total\":5", "\"uid\":\"uid-4\"",
                "\"route\":\"built-in\"").doesNotContain("uid-2");
    }
}
