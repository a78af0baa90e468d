package io.tenantgateway.agent.main;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.cli.HelpTextRules;
import io.tenantgateway.agent.cli.UsageHelp;
import io.tenantgateway.agent.testing.CliRun;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A newcomer's first look: {@code --help} of every command, rendered through {@link Main} as the binary does. Summaries
 * are whole sentences, every line fits one width, placeholders read ({@code =DURATION}, not {@code =<syncInterval>}),
 * and {@code run}'s flags come in agent/REFERENCE.md's groups, each with its default, booleans spelled one way.
 */
class HelpTextTest {
    /** agent/REFERENCE.md's groups of {@code run}'s flags, in its order. */
    private static final List<String> RUN_SECTIONS = List.of(
            "konnectivity-agent flags (upstream names and defaults):",
            "Upstream flags accepted but not implemented yet (a value other than the default warns at start):",
            "tenant-gateway flags (the agent and its tunnels):",
            "HAMi webhook (on with --webhook-tls-cert or --webhook-tls-secret):",
            "Device registration (on with --device-source=mock or --device-source=nvidia-smi):",
            "Device plugin (on with --device-plugin=true; needs device registration):",
            "Node lock and allocation completion (on when devices are registered):",
            "vGPU monitor (on when devices are registered):",
            "Help:");

    /** An option's row in an option list: its names, e.g. {@code -v, --v=N} (descriptions are indented further). */
    private static final Pattern OPTION_ROW = Pattern.compile("^ {2,6}(-[^\\s,]+(?:, -[^\\s,]+)*)");

    /** {@code tenant-gateway [COMMAND...] --help}'s text; it exits 0 and writes nothing to stderr. */
    private static String help(List<String> command) {
        List<String> args = new ArrayList<>(command);
        args.add("--help");
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertThat(run.exitCode()).as("%s --help: %s", command, run.both()).isZero();
        assertThat(run.err()).as("%s --help", command).isEmpty();
        return run.out();
    }

    /** Every command's path below the root ({@code []}: the root itself), hidden ones included. */
    static Stream<List<String>> commands() {
        return HelpTextRules.commands(Main.commandLine()).stream()
                .map(c -> List.of(c.getCommandSpec().qualifiedName(" ").split(" ")))
                .map(path -> path.subList(1, path.size()));
    }

    private static CommandSpec spec(List<String> path) {
        CommandLine command = Main.commandLine();
        for (String name : path) {
            command = command.getSubcommands().get(name);
        }
        return command.getCommandSpec();
    }

    @ParameterizedTest
    @MethodSource("commands")
    void everyLineFitsTheOneWidthAndNoPlaceholderIsAFieldName(List<String> command) {
        String help = help(command);
        assertThat(HelpTextRules.longLines(help)).as("%s --help: lines over %d", command, UsageHelp.WIDTH).isEmpty();
        assertThat(HelpTextRules.fieldNamePlaceholders(help)).as("%s --help", command).isEmpty();
        assertThat(HelpTextRules.optionsWithoutValueLabel(spec(command))).as("%s: options without paramLabel", command)
                .isEmpty();
    }

    @ParameterizedTest
    @MethodSource("commands")
    void everyCommandListShowsWholeSentences(List<String> command) {
        CommandSpec spec = spec(command);
        if (spec.subcommands().isEmpty()) {
            return;
        }
        Map<String, String> summaries = HelpTextRules.commandSummaries(help(command));
        List<String> visible = spec.subcommands().entrySet().stream()
                .filter(e -> !e.getValue().getCommandSpec().usageMessage().hidden()).map(Map.Entry::getKey).toList();
        assertThat(summaries.keySet()).as("%s: command list", command).containsExactlyElementsOf(visible);
        summaries.forEach((name, summary) -> {
            assertThat(HelpTextRules.isWholeSentence(summary)).as("%s %s: summary '%s'", command, name, summary)
                    .isTrue();
            assertThat(summary).as("%s %s: the whole first description line", command, name)
                    .isEqualTo(HelpTextRules.summary(spec.subcommands().get(name).getCommandSpec()));
        });
    }

    @ParameterizedTest
    @MethodSource("commands")
    void everyFirstDescriptionLineIsAWholeSentence(List<String> command) {
        // The command list shows only this line; hidden commands too, should they ever be listed.
        String summary = HelpTextRules.summary(spec(command));
        assertThat(summary).as("%s", command).isNotBlank();
        assertThat(HelpTextRules.isWholeSentence(summary)).as("%s: '%s'", command, summary).isTrue();
    }

    @Test
    void theRootListsCompleteSummaries() {
        Map<String, String> summaries = HelpTextRules.commandSummaries(help(List.of()));
        assertThat(summaries).containsEntry("run",
                "Run the agent: a drop-in konnectivity-agent, plus the HAMi parts that are turned on.");
        assertThat(summaries).containsKeys("certs", "webhook", "probe", "doctor", "annotations")
                .doesNotContainKey("cds-training");
    }

    @Test
    void runHelpStartsWithTheShortSynopsisAndTheUpstreamFlags() {
        List<String> first40 = help(List.of("run")).lines().limit(40).toList();
        assertThat(first40.get(0)).isEqualTo("Usage: tenant-gateway run [OPTIONS]");
        int upstream = first40.indexOf(RUN_SECTIONS.get(0));
        assertThat(upstream).as("the first section's heading in the first 40 lines: %s", first40).isPositive();
        assertThat(first40.get(upstream + 1)).startsWith("      --proxy-server-host=HOST ");
        assertThat(String.join(" ", first40.subList(upstream + 1, upstream + 3))).contains("Default: 127.0.0.1.");
        assertThat(first40.subList(0, upstream)).noneMatch(line -> OPTION_ROW.matcher(line).find());
    }

    @Test
    void runHelpGroupsEveryFlagAsTheReadmeDoes() {
        List<String> lines = help(List.of("run")).lines().toList();
        List<String> headings = lines.stream().filter(line -> !line.startsWith(" ") && line.endsWith(":"))
                .filter(line -> !line.startsWith("Usage:")).toList();
        assertThat(headings).containsExactlyElementsOf(RUN_SECTIONS);

        // Each visible option on one row, none hidden; the upstream ones under the first heading.
        List<String> rows = lines.stream().map(OPTION_ROW::matcher).filter(Matcher::find)
                .flatMap(m -> Arrays.stream(m.group(1).split(", "))).map(name -> name.split("[=\\[]")[0]).toList();
        for (OptionSpec option : spec(List.of("run")).options()) {
            assertThat(rows.stream().filter(option.longestName()::equals).count()).as("%s's rows", option.longestName())
                    .isEqualTo(option.hidden() ? 0 : 1);
        }
        int upstream = lines.indexOf(RUN_SECTIONS.get(0));
        int notImplemented = lines.indexOf(RUN_SECTIONS.get(1));
        assertThat(String.join("\n", lines.subList(upstream, notImplemented)))
                .contains("--proxy-server-port=PORT", "--sync-interval=DURATION", "--lease-namespace=NAMESPACE",
                        "-v, --v=N", "--logtostderr[=true|false]")
                .doesNotContain("--dial-allow", "--webhook-", "--device-", "--warn-on-channel-limit");
    }

    @Test
    void everyFlagOfRunIsDescribedWithItsDefault() {
        CommandSpec run = spec(List.of("run"));
        for (OptionSpec option : run.options()) {
            String description = String.join(" ", option.description()).strip();
            assertThat(description).as("%s: description", option.longestName()).isNotEmpty();
            if (option.usageHelp() || option.versionHelp()) {
                continue;
            }
            assertThat(description).as("%s: names its default", option.longestName())
                    .containsAnyOf("Default: ", "Required: no default");
        }
        // Rendered, the defaults are values, never picocli's "null" for a flag without one.
        assertThat(help(List.of("run"))).doesNotContain("Default: null", "Default: .");
    }

    @Test
    void everyBooleanFlagOfRunIsSpelledTrueFalse() {
        for (OptionSpec option : spec(List.of("run")).options()) {
            boolean bool = option.type() == boolean.class || option.type() == Boolean.class
                    || "true".equals(option.fallbackValue());
            if (!bool || option.usageHelp() || option.versionHelp()) {
                continue;
            }
            assertThat(option.paramLabel()).as("%s", option.longestName()).isEqualTo("true|false");
            assertThat(option.arity().min()).as("%s: --flag alone means true", option.longestName()).isZero();
        }
        assertThat(help(List.of("run"))).contains("--device-plugin[=true|false]").doesNotContain("on|off");
    }

    @Test
    void enableWebhookNamesBothThingsThatTurnItOn() {
        String description = String.join(" ", spec(List.of("run")).findOption("--enable-webhook").description());
        // bin/tenant-gateway's webhook_enabled and WebhookFlags.enabled(): either certificate source.
        assertThat(description).contains("--webhook-tls-cert", "--webhook-tls-secret", "Default: ");
    }

    @Test
    void bothEntryPointsOfRunShowTheSameHelpAtTheSameWidth() {
        // Main.run takes a shortcut for run (no other command's model is built); the root's subcommand is the same.
        StringWriter out = new StringWriter();
        CommandLine root = Main.commandLine();
        root.setOut(new PrintWriter(out, true));
        assertThat(root.execute("run", "--help")).isZero();
        assertThat(out.toString()).isEqualTo(help(List.of("run")));
        for (CommandLine command : HelpTextRules.commands(root)) {
            assertThat(command.getUsageHelpWidth()).as(command.getCommandSpec().qualifiedName())
                    .isEqualTo(UsageHelp.WIDTH);
        }
    }
}
