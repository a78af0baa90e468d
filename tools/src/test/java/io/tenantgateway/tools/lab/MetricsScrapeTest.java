package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricsScrapeTest {
    @Test
    void readsSamplesWithEscapedLabelsAndFindsThemByASubsetOfTheirLabels() {
        MetricsScrape scrape = MetricsScrape.parse("""
                # HELP hami_vgpu_memory_limit_bytes vGPU device memory limit in bytes
                # TYPE hami_vgpu_memory_limit_bytes gauge
                hami_vgpu_memory_limit_bytes{container="cuda",limit_source="annotation",namespace="team-b",pod="b"} 1.073741824E9
                hami_vgpu_memory_limit_bytes{container="cuda",limit_source="region",namespace="team-b",pod="a"} 2048
                tenant_gateway_monitor_scans_total 17.0 1700000000000
                odd{reason="a \\"quoted\\" \\\\ value, with } and\\nnewline"} +Inf

                """);

        assertThat(scrape.samples()).hasSize(4);
        assertThat(scrape.value("hami_vgpu_memory_limit_bytes", Map.of("pod", "b"))).contains(1073741824.0);
        assertThat(scrape.find("hami_vgpu_memory_limit_bytes", Map.of("namespace", "team-b"))).hasSize(2);
        assertThat(scrape.value("hami_vgpu_memory_limit_bytes", Map.of())).as("two match").isEmpty();
        assertThat(scrape.value("tenant_gateway_monitor_scans_total", Map.of())).contains(17.0);
        assertThat(scrape.find("odd", Map.of()).get(0).labels())
                .containsExactly(Map.entry("reason", "a \"quoted\" \\ value, with } and\nnewline"));
        assertThat(scrape.value("odd", Map.of())).contains(Double.POSITIVE_INFINITY);
    }

    @Test
    void aLineThatIsNoSampleIsRefusedWithItsNumber() {
        assertThatThrownBy(() -> MetricsScrape.parse("# ok\n404 page not found\n"))
                .hasMessage("line 2: 404 page not found (expected: name{labels} value)");
        assertThatThrownBy(() -> MetricsScrape.parse("x{a=b} 1\n"))
                .hasMessage("line 1: labels a=b (expected: name=\"value\",…)");
    }
}
