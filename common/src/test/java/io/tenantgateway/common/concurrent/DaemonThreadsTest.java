package io.tenantgateway.common.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
    @Test
    void threadsAreNamedDaemons() {
        Thread single = DaemonThreads.named("registrar-n1").newThread(() -> { });
        DaemonThreads numbered = DaemonThreads.numbered("agent-parts");
        assertThat(single.isDaemon()).isTrue();
        assertThat(single.getName()).isEqualTo("registrar-n1");
        assertThat(numbered.newThread(() -> { }).getName()).isEqualTo("agent-parts-1");
        assertThat(numbered.newThread(() -> { }).getName()).isEqualTo("agent-parts-2");
    }
}
