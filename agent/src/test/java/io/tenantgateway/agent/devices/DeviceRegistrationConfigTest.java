package io.tenantgateway.agent.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.devices.DeviceRegistrationConfig.Source;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeviceRegistrationConfigTest {

    @Test
    void defaultsMatchHamisPlugin() {
        DeviceRegistrationConfig config = DeviceRegistrationConfig.builder("worker-1").build();

        assertThat(config.source()).isEqualTo(Source.NVIDIA_SMI);
        assertThat(config.splitCount()).isEqualTo(10);
        assertThat(config.handshakeInterval()).isEqualTo(Duration.ofSeconds(20));
        assertThat(config.rescanInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(config.nvidiaSmiPath()).isEqualTo(Path.of("/usr/bin/nvidia-smi"));
        assertThat(config.sysfsRoot()).isEqualTo(Path.of("/sys"));
        assertThat(config.advertiseCapacity()).isFalse();
        assertThat(config.deregisterOnExit()).isFalse();
        assertThat(config.nodeCapacity()).as("--report-node-capacity is off by default, as HAMi's").isNull();
        assertThat(config.createSource()).get().isInstanceOf(NvidiaSmiDeviceSource.class);
    }

    @Test
    void mockModeAdvertisesCapacityUnlessToldNot() {
        MockInventory inventory = MockInventory.of(GpuPreset.A100_80GB, 1);

        assertThat(DeviceRegistrationConfig.builder("w").mock(inventory).build().advertiseCapacity()).isTrue();
        assertThat(DeviceRegistrationConfig.builder("w").mock(inventory).advertiseCapacity(false).build()
                .advertiseCapacity()).isFalse();
        assertThat(DeviceRegistrationConfig.builder("w").mock(inventory).build().createSource()).get()
                .isInstanceOf(MockDeviceSource.class);
        assertThat(DeviceRegistrationConfig.builder("w").source(Source.NONE).build().createSource()).isEmpty();
    }

    @Test
    void rejectsValuesWithTheFlagAndWhatIsExpected() {
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("Worker_1").build())
                .hasMessageStartingWith("--node-name: \"Worker_1\" (expected: a lower-case RFC 1123 subdomain");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w\n\u001b[2J").build())
                .hasMessageStartingWith("--node-name: \"w\\n\\x1b[2J\" (expected: ");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").source(Source.MOCK).build())
                .hasMessage("--mock-gpus/--mock-inventory: none (expected: a mock inventory when --device-source=mock)");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").splitCount(0).build())
                .hasMessage("--device-split-count: 0 (expected: > 0)");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").handshakeInterval(Duration.ofSeconds(60)).build())
                .hasMessage("--handshake-interval: PT1M (expected: < 60s, the HAMi scheduler's staleness window)");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").handshakeInterval(Duration.ZERO).build())
                .hasMessage("--handshake-interval: PT0S (expected: > 0)");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").nvidiaSmiTimeout(Duration.ofSeconds(-1)).build())
                .hasMessage("--nvidia-smi-timeout: PT-1S (expected: > 0)");
        assertThatThrownBy(() -> DeviceRegistrationConfig.builder("w").handshakeInterval(Duration.ofMillis(500))
                .retryInitialBackoff(Duration.ofSeconds(1)).build())
                .hasMessage("retryInitialBackoff: PT1S (expected: <= --handshake-interval PT0.5S)");
        assertThatThrownBy(() -> Source.parse("gpu"))
                .hasMessage("--device-source: 'gpu' (expected one of: mock, nvidia-smi, none)");
        assertThat(Source.parse(" NVIDIA-SMI ")).isEqualTo(Source.NVIDIA_SMI);
    }
}
