package io.tenantgateway.agent.monitor.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** HAMi's cache-directory cleanup rules: grace from the first sighting without a pod, never with the API down. */
class CleanupPolicyTest {
    private static final String LIVE = "11111111-2222-3333-4444-555555555555";
    private static final String GONE = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    private static final String LIVE_DIR = LIVE + "_cuda";
    private static final String GONE_DIR = GONE + "_cuda";
    private static final Instant T0 = Instant.parse("2026-12-07T10:00:00Z");

    private final CleanupPolicy policy = new CleanupPolicy(Duration.ofMinutes(5));

    @Test
    void aDirectoryWithoutALivePodGoesOnlyAfterTheGraceFromItsFirstSighting() {
        CleanupPolicy.Decision first = policy.decide(Set.of(LIVE_DIR, GONE_DIR), Optional.of(Set.of(LIVE)), Map.of(),
                T0);
        assertThat(first.delete()).isEmpty();
        assertThat(first.waiting()).containsExactly(GONE_DIR);
        assertThat(first.orphanSince()).containsExactly(Map.entry(GONE_DIR, T0));

        CleanupPolicy.Decision early = policy.decide(Set.of(LIVE_DIR, GONE_DIR), Optional.of(Set.of(LIVE)),
                first.orphanSince(), T0.plus(Duration.ofMinutes(5)).minusMillis(1));
        assertThat(early.delete()).isEmpty();
        assertThat(early.orphanSince()).containsExactly(Map.entry(GONE_DIR, T0));

        CleanupPolicy.Decision due = policy.decide(Set.of(LIVE_DIR, GONE_DIR), Optional.of(Set.of(LIVE)),
                early.orphanSince(), T0.plus(Duration.ofMinutes(5)));
        assertThat(due.delete()).containsExactly(GONE_DIR);
        assertThat(due.waiting()).isEmpty();
        assertThat(due.orphanSince()).isEmpty();
    }

    @Test
    void aLivePodsDirectoryIsNeverDeletedHoweverLongItHasBeenThere() {
        CleanupPolicy.Decision decision = policy.decide(Set.of(LIVE_DIR), Optional.of(Set.of(LIVE)),
                Map.of(LIVE_DIR, T0.minus(Duration.ofDays(3))), T0);
        assertThat(decision.delete()).isEmpty();
        assertThat(decision.waiting()).isEmpty();
        assertThat(decision.orphanSince()).as("the pod is back: its grace starts again when it goes").isEmpty();
    }

    @Test
    void withTheApiDownNothingIsDeletedAndNoGraceStarts() {
        CleanupPolicy.Decision down = policy.decide(Set.of(LIVE_DIR, GONE_DIR), Optional.empty(),
                Map.of(GONE_DIR, T0), T0.plus(Duration.ofHours(1)));
        assertThat(down.delete()).isEmpty();
        assertThat(down.waiting()).containsExactly(GONE_DIR);
        assertThat(down.orphanSince()).as("kept, not started for the live pod's directory")
                .containsExactly(Map.entry(GONE_DIR, T0));

        CleanupPolicy.Decision back = policy.decide(Set.of(LIVE_DIR, GONE_DIR), Optional.of(Set.of(LIVE)),
                down.orphanSince(), T0.plus(Duration.ofHours(1)));
        assertThat(back.delete()).as("the API answered: the grace had passed").containsExactly(GONE_DIR);
    }

    @Test
    void aDirectoryThatDisappearedIsForgotten() {
        CleanupPolicy.Decision decision = policy.decide(Set.of(), Optional.of(Set.of()), Map.of(GONE_DIR, T0), T0);
        assertThat(decision.orphanSince()).isEmpty();
        assertThat(decision.delete()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"lost+found", "not-a-uid_cuda", "11111111-2222-3333-4444-55555555555_cuda",
        "11111111-2222-3333-4444-555555555555_", "11111111x2222-3333-4444-555555555555_cuda",
        "1111111g-2222-3333-4444-555555555555_cuda", "11111111-2222-3333-4444-555555555555"})
    void aNameThatIsNoPodContainerIsLeftAlone(String name) {
        assertThat(CleanupPolicy.podUid(name)).isEmpty();
        CleanupPolicy.Decision decision = new CleanupPolicy(Duration.ZERO).decide(Set.of(name), Optional.of(Set.of()),
                Map.of(), T0);
        assertThat(decision.delete()).isEmpty();
        assertThat(decision.waiting()).isEmpty();
    }

    @Test
    void theUidAndContainerOfADirectoryName() {
        assertThat(CleanupPolicy.podUid(LIVE + "_main_1")).contains(LIVE);
        assertThat(CleanupPolicy.containerName(LIVE + "_main_1")).contains("main_1");
        assertThat(CleanupPolicy.containerName("x_y")).isEmpty();
    }

    @Test
    void aZeroGraceDeletesAtTheFirstScanThatKnowsThePodIsGone() {
        CleanupPolicy zero = new CleanupPolicy(Duration.ZERO);
        assertThat(zero.decide(Set.of(GONE_DIR), Optional.of(Set.of()), Map.of(), T0).delete())
                .containsExactly(GONE_DIR);
        assertThat(zero.decide(Set.of(GONE_DIR), Optional.empty(), Map.of(), T0).delete()).isEmpty();
        assertThatThrownBy(() -> new CleanupPolicy(Duration.ofSeconds(-1)))
                .hasMessage("grace: PT-1S (expected: >= 0)");
    }
}
