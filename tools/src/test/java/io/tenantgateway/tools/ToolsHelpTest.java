package io.tenantgateway.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.cli.HelpTextRules;
import io.tenantgateway.agent.cli.UsageHelp;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code lab} and {@code bench} help read as the agent jar's commands do: the same width, whole summaries, labels. */
class ToolsHelpTest {
    private static String help(String... command) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] args = Stream.concat(Arrays.stream(command), Stream.of("--help")).toArray(String[]::new);
        assertThat(Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args)).as("%s", err).isZero();
        return out.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "lab", "bench"})
    void helpFitsTheAgentsWidthWithLabelsAndWholeSummaries(String command) {
        String[] path = command.isEmpty() ? new String[0] : new String[] {command};
        String help = help(path);
        assertThat(HelpTextRules.longLines(help)).isEmpty();
        assertThat(HelpTextRules.fieldNamePlaceholders(help)).isEmpty();
        CommandLine root = Main.commandLine();
        CommandLine commandLine = command.isEmpty() ? root : root.getSubcommands().get(command);
        assertThat(commandLine.getUsageHelpWidth()).isEqualTo(UsageHelp.WIDTH);
        assertThat(HelpTextRules.optionsWithoutValueLabel(commandLine.getCommandSpec())).isEmpty();
        assertThat(HelpTextRules.isWholeSentence(HelpTextRules.summary(commandLine.getCommandSpec()))).isTrue();
    }

    @Test
    void theCommandListShowsEachWholeFirstLine() {
        Map<String, String> summaries = HelpTextRules.commandSummaries(help());
        CommandLine root = Main.commandLine();
        assertThat(summaries.keySet()).containsExactlyElementsOf(List.of("lab", "bench"));
        summaries.forEach((name, summary) -> assertThat(summary)
                .isEqualTo(HelpTextRules.summary(root.getSubcommands().get(name).getCommandSpec())));
        // bench wrapped at picocli's 80 before; at the shared width its description fills longer lines.
        assertThat(help("bench").lines()).anyMatch(line -> line.length() > 80);
    }
}
