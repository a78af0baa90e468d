package io.tenantgateway.tools.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.tools.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LabOptionsTest {
    @Test
    void defaultsRunAllElevenChecksInOrderWithNothingBroken() {
        LabOptions options = LabOptions.defaults();

        assertThat(options.checks()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        assertThat(options.breakages()).isEmpty();
        assertThat(options.timeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(options.withChecks(Set.of(8, 2, 5)).checks()).containsExactly(2, 5, 8);
    }

    @Test
    void rejectsChecksOutsideOneToElevenAndNonPositiveTimeouts() {
        assertThatThrownBy(() -> LabOptions.defaults().withChecks(Set.of(12)))
                .hasMessage("--checks: 12 (expected: 1-11)");
        assertThatThrownBy(() -> LabOptions.defaults().withChecks(Set.of(0)))
                .hasMessage("--checks: 0 (expected: 1-11)");
        assertThatThrownBy(() -> LabOptions.defaults().withChecks(Set.of()))
                .hasMessage("--checks: [] (expected: at least one of 1-11)");
        assertThatThrownBy(() -> LabOptions.defaults().withTimeout(Duration.ZERO))
                .hasMessage("--timeout: PT0S (expected: > 0)");
        assertThatThrownBy(() -> new LabOptions(Set.of(1), Set.of(), Duration.ofSeconds(1), null))
                .isInstanceOf(NullPointerException.class).hasMessage("workDir");
    }

    @Test
    void everyBreakageParsesFromItsFlagValueAndNamesACheckAndATenant() {
        for (Breakage breakage : Breakage.values()) {
            assertThat(Breakage.parse(" " + breakage.flagValue().toUpperCase(java.util.Locale.ROOT) + " "))
                    .isEqualTo(breakage);
            assertThat(breakage.check()).isBetween(1, LabOptions.CHECK_COUNT);
            assertThat(breakage.appliesTo(true) || breakage.appliesTo(false)).isTrue();
        }
        assertThat(Arrays.stream(Breakage.values()).map(Breakage::check).distinct())
                .as("every check can be broken").containsExactlyInAnyOrder(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        assertThat(Breakage.DEVICE_PLUGIN.appliesTo(true)).isFalse();
        assertThat(Breakage.DIAL_POLICY.appliesTo(true) && Breakage.DIAL_POLICY.appliesTo(false)).isTrue();
        assertThatThrownBy(() -> Breakage.parse("tunnel"))
                .hasMessageStartingWith("--break: tunnel (expected: one of agent-token, device-registration,");
    }

    @Test
    void badLabFlagsExitTwoWithOneLine() {
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "lab", "--break=nothing");

        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).startsWith("error: --break: nothing (expected: one of agent-token,")
                .hasLineCount(1);
        StringWriter err2 = new StringWriter();
        assertThat(Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err2), "lab", "--timeout=soon"))
                .isEqualTo(2);
        assertThat(err2.toString()).startsWith("error: --timeout: 'soon'");
    }
}
