package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

class GoFlagsTest {
    @Command(name = "demo", mixinStandardHelpOptions = true)
    static final class Demo {
        @Option(names = {"-v", "--v"})
        int verbosity;

        @Option(names = "--health-server-port")
        int healthPort;

        @Option(names = "--sync-forever", arity = "0..1", fallbackValue = "true")
        boolean syncForever;
    }

    private static CommandLine.Model.CommandSpec spec() {
        return new CommandLine(new Demo()).getCommandSpec();
    }

    @Test
    void singleDashLongFlagsBecomeDoubleDashOnesAndShortOnesStay() {
        assertThat(GoFlags.normalize(spec(), "-v=8", "-health-server-port=0", "-sync-forever", "-h", "--v=2",
                "-unknown=1", "--", "-health-server-port"))
                .containsExactly("-v=8", "--health-server-port=0", "--sync-forever", "-h", "--v=2", "-unknown=1",
                        "--", "-health-server-port");
    }

    @Test
    void nearestIsATypoNotADifferentFlag() {
        Set<String> known = Set.of("--enable-lock-controller", "--enable-webhook", "--keepalive-time", "--v");
        assertThat(GoFlags.nearest("--enable-lock-controler", known)).contains("--enable-lock-controller");
        assertThat(GoFlags.nearest("--keepalive-tiem", known)).contains("--keepalive-time");
        assertThat(GoFlags.nearest("--enable-webhok", known)).contains("--enable-webhook");
        assertThat(GoFlags.nearest("--completely-different", known)).isEmpty();
        assertThat(GoFlags.distance("controler", "controller")).isEqualTo(1);
        assertThat(GoFlags.distance("tiem", "time")).isEqualTo(1);
    }

    @Test
    void unknownFlagMessageNamesTheFlagWithoutItsValue() {
        assertThatThrownBy(() -> new CommandLine(new Demo()).parseArgs("--health-server-prot=8134"))
                .isInstanceOfSatisfying(CommandLine.ParameterException.class, e -> assertThat(GoFlags.message(e))
                        .isEqualTo("unknown flag: --health-server-prot (did you mean --health-server-port?)"));
        assertThat(GoFlags.unknownFlag("-sync-forevr", List.of("--sync-forever")))
                .isEqualTo("unknown flag: -sync-forevr (did you mean --sync-forever?)");
    }
}
