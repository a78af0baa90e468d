package io.tenantgateway.tunnel.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentMetricsTest {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final AgentMetrics metrics = new AgentMetrics(registry);

    @Test
    void packetSeriesAppearOnFirstUseOnly() {
        assertThat(points("konnectivity_network_proxy_agent_stream_packets")).isEmpty();

        metrics.packet(AgentMetrics.TO_AGENT, "DIAL_REQ");
        metrics.packet(AgentMetrics.TO_AGENT, "DIAL_REQ");
        metrics.packet(AgentMetrics.FROM_AGENT, "DIAL_RSP");

        assertThat(points("konnectivity_network_proxy_agent_stream_packets"))
                .extracting(p -> p.getLabels().get("segment") + "/" + p.getLabels().get("packet_type") + "="
                        + p.getValue())
                .containsExactlyInAnyOrder("to_agent/DIAL_REQ=2.0", "from_agent/DIAL_RSP=1.0");
    }

    @Test
    void creditPacketsStayOutOfUpstreamsLabelSpace() {
        metrics.packet(AgentMetrics.FROM_AGENT, "TG_CREDIT");
        metrics.packet(AgentMetrics.TO_AGENT, "TG_CREDIT");
        metrics.packet(AgentMetrics.TO_AGENT, "TG_CREDIT");

        assertThat(points("konnectivity_network_proxy_agent_stream_packets")).isEmpty();
        assertThat(points("tenant_gateway_tunnel_credit_packets"))
                .extracting(p -> p.getLabels().get("segment") + "=" + p.getValue())
                .containsExactlyInAnyOrder("from_agent=1.0", "to_agent=2.0");
    }

    @Test
    void streamErrorsAlsoCountTheDeprecatedServerConnectionFailures() {
        assertThat(gauge("konnectivity_network_proxy_agent_server_connection_failure_count"))
                .extracting(p -> p.getLabels().get("direction") + "=" + p.getValue())
                .containsExactlyInAnyOrder("to_server=0.0", "from_server=0.0");

        metrics.streamError(AgentMetrics.TO_AGENT, "Unavailable", "UNKNOWN");

        assertThat(gauge("konnectivity_network_proxy_agent_server_connection_failure_count"))
                .extracting(p -> p.getLabels().get("direction") + "=" + p.getValue())
                .containsExactlyInAnyOrder("to_server=0.0", "from_server=1.0");
    }

    private List<GaugeDataPointSnapshot> gauge(String name) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals(name))
                .map(GaugeSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream()).toList();
    }

    private List<CounterDataPointSnapshot> points(String name) {
        return registry.scrape().stream().filter(m -> m.getMetadata().getName().equals(name))
                .map(CounterSnapshot.class::cast).flatMap(m -> m.getDataPoints().stream()).toList();
    }
}
