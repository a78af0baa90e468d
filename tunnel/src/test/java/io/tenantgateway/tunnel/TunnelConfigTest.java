package io.tenantgateway.tunnel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tunnel.policy.DialPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class TunnelConfigTest {
    @Test
    void defaultsAreUpstreams() {
        TunnelConfig config = TunnelConfig.builder().build();
        assertThat(config.proxyServerHost()).isEqualTo("127.0.0.1");
        assertThat(config.proxyServerPort()).isEqualTo(8091);
        assertThat(config.syncInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.syncIntervalCap()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.probeInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.syncForever()).isFalse();
        assertThat(config.keepaliveTime()).isEqualTo(Duration.ofHours(1));
        assertThat(config.xfrChannelSize()).isEqualTo(150);
        assertThat(config.countServerLeases()).isFalse();
        assertThat(config.leaseNamespace()).isEqualTo("kube-system");
        assertThat(config.leaseLabelSelector()).isEqualTo("k8s-app=konnectivity-server");
        assertThat(config.dialTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.dialPolicy()).isEqualTo(DialPolicy.ALLOW_ALL);
        assertThat(config.agentId()).isNotBlank();
        assertThat(config.perTunnelBufferBytes()).isEqualTo(150L * 64 * 1024);
        assertThat(config.toBuilder().build()).isEqualTo(config);
    }

    @Test
    void acceptsAnyPositiveKeepaliveAsUpstreamDoes() {
        // konnectivity-server GOAWAYs pings more often than every 30s; the CLI warns, the config takes it.
        assertThat(TunnelConfig.builder().keepaliveTime(Duration.ofSeconds(10)).build().keepaliveTime())
                .isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> TunnelConfig.builder().keepaliveTime(Duration.ZERO).build())
                .hasMessage("--keepalive-time: 0s (expected: > 0)");
        assertThatThrownBy(() -> TunnelConfig.builder().keepaliveTime(Duration.ofSeconds(-1)).build())
                .hasMessage("--keepalive-time: -1s (expected: > 0)");
    }

    @Test
    void alpnGetsH2AppendedAsGrpcGoDoes() {
        assertThat(TunnelConfig.builder().build().alpnProtos()).isEmpty();
        assertThat(TunnelConfig.builder().alpnProtos(List.of("konnectivity")).build().alpnProtos())
                .containsExactly("konnectivity", "h2");
        assertThat(TunnelConfig.builder().alpnProtos(List.of("h2", "konnectivity")).build().alpnProtos())
                .containsExactly("h2", "konnectivity");
        assertThat(TunnelConfig.builder().alpnProtos(List.of("http/1.1", "")).build().alpnProtos())
                .containsExactly("http/1.1", "h2");
        assertThat(TunnelConfig.builder().alpnProtos(List.of("")).build().alpnProtos()).isEmpty();
    }

    @Test
    void rejectsOtherInvalidFlags() {
        assertThatThrownBy(() -> TunnelConfig.builder().xfrChannelSize(0).build())
                .hasMessage("--xfr-channel-size: 0 (expected: > 0)");
        assertThatThrownBy(() -> TunnelConfig.builder().proxyServerPort(0).build())
                .hasMessage("--proxy-server-port: 0 (expected: 1..65535)");
        assertThatThrownBy(() -> TunnelConfig.builder().syncInterval(Duration.ofSeconds(5))
                .syncIntervalCap(Duration.ofSeconds(2)).build())
                .hasMessage("--sync-interval-cap: 2s (expected: >= --sync-interval 5s)");
        assertThatThrownBy(() -> TunnelConfig.builder().probeInterval(Duration.ZERO).build())
                .hasMessage("--probe-interval: 0s (expected: > 0)");
        assertThatThrownBy(() -> TunnelConfig.builder().agentCert(Path.of("tls.crt")).build())
                .hasMessage("--agent-cert/--agent-key: tls.crt/null (expected: both or neither)");
        assertThatThrownBy(() -> TunnelConfig.builder().agentId(" ").build())
                .hasMessage("--agent-id: \"\" (expected: a non-empty id)");
        assertThatThrownBy(() -> TunnelConfig.builder().maxDataSize(100).build())
                .hasMessage("maxDataSize: 100 (expected: 1024..2097152)");
    }

    @Test
    void stuckTargetTimeoutIsThirtySecondsZeroTurnsItOffAndBelowOneSecondIsRejected() {
        assertThat(TunnelConfig.builder().build().stuckTargetTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(TunnelConfig.builder().build().describe()).containsEntry("stuck-target-timeout", "30s");
        assertThat(TunnelConfig.builder().stuckTargetTimeout(Duration.ZERO).build().stuckTargetTimeout()).isZero();
        assertThat(TunnelConfig.builder().stuckTargetTimeout(Duration.ofSeconds(1)).build().stuckTargetTimeout())
                .isEqualTo(Duration.ofSeconds(1));
        assertThatThrownBy(() -> TunnelConfig.builder().stuckTargetTimeout(Duration.ofMillis(500)).build())
                .hasMessage("--stuck-target-timeout: 500ms (expected: >= 1s, or 0 to never close a tunnel for it)");
        assertThatThrownBy(() -> TunnelConfig.builder().stuckTargetTimeout(Duration.ofSeconds(-5)).build())
                .hasMessage("--stuck-target-timeout: -5s (expected: >= 1s, or 0 to never close a tunnel for it)");
    }

    @Test
    void describeRedactsTheKeyAndShowsTokenPathOnly() {
        TunnelConfig config = TunnelConfig.builder().agentCert(Path.of("/pki/tls.crt"))
                .agentKey(Path.of("/pki/tls.key")).serviceAccountTokenPath(Path.of("/tokens/token")).build();
        assertThat(config.describe()).containsEntry("agent-key", "<set>")
                .containsEntry("service-account-token-path", "/tokens/token")
                .containsEntry("keepalive-time", "1h0m0s");
    }
}
