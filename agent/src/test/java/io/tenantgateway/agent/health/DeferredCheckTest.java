package io.tenantgateway.agent.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DeferredCheckTest {
    @Test
    void notStartedUntilBoundThenTheBoundCheckAnswers() {
        DeferredCheck deferred = new DeferredCheck("lock-controller-synced");
        HealthCheck check = deferred.check();
        assertThat(check.name()).isEqualTo("lock-controller-synced");
        assertThat(check.run()).isEqualTo(HealthCheck.Result.failed("not started yet"));

        deferred.bind(new HealthCheck("lock-controller-synced", () -> HealthCheck.Result.failed("informers")));
        assertThat(check.run()).isEqualTo(HealthCheck.Result.failed("informers"));
        deferred.bind(new HealthCheck("lock-controller-synced", () -> HealthCheck.Result.OK));
        assertThat(check.run().ok()).isTrue();
    }

    @Test
    void aCheckOfAnotherNameIsRefused() {
        DeferredCheck deferred = new DeferredCheck("webhook-serving");
        assertThatThrownBy(() -> deferred.bind(new HealthCheck("devices-registered", () -> HealthCheck.Result.OK)))
                .hasMessage("check: devices-registered (expected: webhook-serving)");
    }
}
