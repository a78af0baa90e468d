package io.tenantgateway.agent.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.common.retry.Backoff;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocationConfigTest {
    @Test
    void defaultsMatchTheScheduler() {
        AllocationConfig config = AllocationConfig.defaults("node-a");

        assertThat(config.mode()).isEqualTo(AllocationMode.OBSERVE);
        assertThat(config.nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(config.retryBackoff()).isEqualTo(Backoff.HAMI_NODE_LOCK);
        assertThat(config.podFieldSelector()).isTrue();
    }

    @Test
    void rejectsInvalidValuesNamingTheFlag() {
        assertThatThrownBy(() -> AllocationConfig.defaults(" "))
                .hasMessage("--node-name: \" \" (expected: this node's name, e.g. from NODE_NAME)");
        assertThatThrownBy(() -> AllocationConfig.defaults("n").withNodeLockTimeout(Duration.ZERO))
                .hasMessage("--node-lock-timeout: PT0S (expected: > 0)");
        assertThatThrownBy(() -> AllocationConfig.defaults("n").withReapInterval(Duration.ofSeconds(-1)))
                .hasMessage("reapInterval: PT-1S (expected: > 0)");
    }

    @Test
    void parsesAllocationMode() {
        assertThat(AllocationMode.parse("device-plugin")).isEqualTo(AllocationMode.DEVICE_PLUGIN);
        assertThat(AllocationMode.parse(" Observe ")).isEqualTo(AllocationMode.OBSERVE);
        assertThat(AllocationMode.OBSERVE.flagValue()).isEqualTo("observe");
        assertThatThrownBy(() -> AllocationMode.parse("auto"))
                .hasMessage("--allocation-mode: auto (expected: device-plugin or observe)");
        assertThatThrownBy(() -> AllocationMode.parse("complete"))
                .hasMessageStartingWith("--allocation-mode: complete (expected: observe or device-plugin;");
    }
}
