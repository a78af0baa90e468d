package io.tenantgateway.tunnel.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.common.memory.MemoryBudget;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TargetBudgetTest {
    private static final long MIB = 1024 * 1024;

    @Test
    void isThreeEighthsOfTheDirectLimitAndWakesWaitersOnceARequestFitsAgain() {
        TargetBudget budget = TargetBudget.of(MemoryBudget.fromLimits(48 * MIB, 32 * MIB));
        assertThat(budget.limit()).isEqualTo(12 * MIB);
        assertThat(budget.account().name()).isEqualTo("tunnel-target-buffers");
        assertThat(budget.account().pool()).isEqualTo(MemoryBudget.Pool.DIRECT);

        budget.reserveAnyway(10 * MIB); // target writes in flight
        assertThat(budget.tryReserve(TunnelClient.REQUEST_RESERVATION)).isFalse();
        AtomicInteger woken = new AtomicInteger();
        budget.await(TunnelClient.REQUEST_RESERVATION, woken::incrementAndGet);
        budget.release(2 * MIB);
        assertThat(woken).as("8 MiB used: a 4 MiB request does not fit yet").hasValue(0);
        budget.release(1 * MIB);
        assertThat(woken).as("7 MiB used: it fits").hasValue(1);
        budget.release(1 * MIB);
        assertThat(woken).as("woken once").hasValue(1);
        assertThat(budget.tryReserve(TunnelClient.REQUEST_RESERVATION)).isTrue();
    }

    @Test
    void aWaiterRegisteredAfterTheReleaseIsWokenAtOnce() {
        TargetBudget budget = TargetBudget.of(MemoryBudget.fromLimits(48 * MIB, 8 * MIB));
        assertThat(budget.limit()).as("floor").isEqualTo(6 * MIB);
        AtomicInteger woken = new AtomicInteger();
        budget.await(TunnelClient.REQUEST_RESERVATION, woken::incrementAndGet);
        assertThat(woken).hasValue(1);
    }
}
