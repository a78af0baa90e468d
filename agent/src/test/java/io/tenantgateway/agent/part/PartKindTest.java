package io.tenantgateway.agent.part;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The list of parts is refused when it is not sound: an unknown name to start after, a cycle, a name twice. */
class PartKindTest {
    private static Part part(Plan plan) {
        return new Part() {
            @Override
            public Plan plan() {
                return plan;
            }

            @Override
            public void start(PartContext context) {
            }
        };
    }

    private static PartKind on(Plan plan) {
        return PartKind.of(plan.name(), () -> Optional.of(part(plan)));
    }

    private static PartKind off(String name) {
        return PartKind.of(name, Optional::empty);
    }

    @Test
    void theEnabledPartsComeInListOrderAndMayStartAfterAPartThatIsOff() {
        List<Part> parts = PartKind.enabled(List.of(on(Plan.of("devices").after("device-plugin")),
                off("device-plugin"), on(Plan.of("webhook"))));

        assertThat(parts).extracting(p -> p.plan().name()).containsExactly("devices", "webhook");
    }

    @Test
    void anUnknownNameToStartAfterIsRefusedNamingThePartAndTheName() {
        assertThatThrownBy(() -> PartKind.enabled(List.of(on(Plan.of("devices").after("device-plugn")),
                off("device-plugin"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("part devices: starts after device-plugn, which is no part (expected: one of [devices,"
                        + " device-plugin])");
    }

    @Test
    void aCycleIsRefusedWithItsPath() {
        assertThatThrownBy(() -> PartKind.enabled(List.of(on(Plan.of("a").after("b")), on(Plan.of("b").after("c")),
                on(Plan.of("c").after("a")))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("part a: starts after itself: a after b after c after a");
        assertThatThrownBy(() -> PartKind.enabled(List.of(on(Plan.of("a").after("a")))))
                .hasMessage("part a: starts after itself: a after a");
    }

    @Test
    void aNameTwiceOrAPlanNamedOtherwiseIsRefused() {
        assertThatThrownBy(() -> PartKind.enabled(List.of(on(Plan.of("webhook")), off("webhook"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("part webhook: listed twice in the list of parts (expected: one entry per part)");
        assertThatThrownBy(() -> PartKind.enabled(List.of(PartKind.of("webhook",
                () -> Optional.of(part(Plan.of("hook")))))))
                .hasMessage("part webhook: its plan is named hook (expected: webhook)");
    }
}
