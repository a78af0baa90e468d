package io.tenantgateway.common.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.common.memory.MemoryBudget.Pool;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
    private final MemoryBudget budget = MemoryBudget.fromLimits(48L << 20, 32L << 20);

    @Test
    void accountIsAShareOfItsPoolWithAFloor() {
        assertThat(budget.account("webhook-bodies", Pool.HEAP, 0.25, 0).limit()).isEqualTo(12L << 20);
        assertThat(budget.account("tunnel", Pool.DIRECT, 0.5, 0).limit()).isEqualTo(16L << 20);
        assertThat(budget.account("tiny", Pool.DIRECT, 0.001, 1 << 20).limit()).isEqualTo(1 << 20);
        assertThat(budget.account("tunnel", Pool.HEAP, 1, 0).limit()).as("first share stays").isEqualTo(16L << 20);
        assertThat(budget.accounts()).extracting(MemoryBudget.Account::name)
                .containsExactly("webhook-bodies", "tunnel", "tiny");
    }

    @Test
    void reservationsStopAtTheLimitAndCountRefusals() {
        MemoryBudget.Account account = budget.account("a", Pool.HEAP, 0.25, 0);
        assertThat(account.tryReserve(10L << 20)).isTrue();
        assertThat(account.tryReserve(3L << 20)).isFalse();
        assertThat(account.used()).isEqualTo(10L << 20);
        assertThat(account.refusals()).isEqualTo(1);
        account.release(10L << 20);
        assertThat(account.tryReserve(12L << 20)).isTrue();
        assertThat(account.peak()).isEqualTo(12L << 20);
        assertThat(account.reserveAnyway(1)).isTrue();
        assertThat(account.above(1.0)).isTrue();
        account.release((12L << 20) + 1);
        assertThat(account.used()).isZero();
    }

    @Test
    void badArgumentsNameWhatWasExpected() {
        MemoryBudget.Account account = budget.account("a", Pool.HEAP, 0.25, 0);
        assertThatThrownBy(() -> account.release(1)).hasMessage("a: released 1 bytes, only 0 were reserved");
        assertThat(account.used()).isZero();
        assertThatThrownBy(() -> account.tryReserve(-1)).hasMessage("bytes: -1 (expected: >= 0)");
        assertThatThrownBy(() -> budget.account("b", Pool.HEAP, 0, 0)).hasMessage("share: 0.0 (expected: in (0, 1])");
        assertThatThrownBy(() -> MemoryBudget.fromLimits(0, 1)).hasMessage("heapLimit: 0 (expected: > 0)");
    }

    @Test
    void jvmBudgetReadsThisJvmsLimits() {
        assertThat(MemoryBudget.jvm().heapLimit()).isEqualTo(Runtime.getRuntime().maxMemory());
        assertThat(MemoryBudget.jvm().directLimit()).isPositive();
    }

    @Test
    void theDirectLimitIsReadWithoutTheManagementBeansAndAgreesWithThem() {
        assertThat(MemoryBudget.bitsMaxMemory()).as("java.nio.Bits' own limit").isPositive()
                .isEqualTo(MemoryBudget.maxDirectMemoryFromManagement());
        assertThat(MemoryBudget.jvm().directLimit()).isEqualTo(MemoryBudget.bitsMaxMemory());
    }
}
