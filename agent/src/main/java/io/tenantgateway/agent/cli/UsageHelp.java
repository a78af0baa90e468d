package io.tenantgateway.agent.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.OptionSpec;

/**
 * How every {@code tenant-gateway} command's {@code --help} is laid out, in one place for both jars' entry points
 * (the agent's {@code Main} and the tools jar's): one wrap width for every command ({@link #WIDTH}, the width of the
 * code and the docs), an option column wide enough for most {@code --flag=VALUE}, and, for a command that lists its
 * options under headings ({@link Sectioned}, as {@code run} does), those sections.
 */
public final class UsageHelp {
    /** The wrap width of every command's help. */
    public static final int WIDTH = 120;
    /** The widest {@code --flag=VALUE} that still has its description on the same line. */
    static final int OPTION_COLUMN_WIDTH = 34;
    /** The heading of the standard {@code -h}/{@code -V} options in a sectioned option list. */
    static final String HELP_HEADING = "Help";
    /** The heading of options whose {@code order} names no section (none should have that). */
    static final String OTHER_HEADING = "Other options";

    private UsageHelp() {
    }

    /**
     * A command whose {@code --help} lists its options in sections: each option under the section its picocli
     * {@code order} names, in the order of {@link #optionSections()}; {@code -h} and {@code -V} last.
     */
    public interface Sectioned {
        /** The sections in the order they are shown. */
        List<Section> optionSections();
    }

    /**
     * One section of an option list.
     *
     * @param order the picocli {@code order} of the options it lists
     * @param heading its heading, without the trailing colon
     */
    public record Section(int order, String heading) {
    }

    /**
     * Sets the layout on {@code commandLine} and every subcommand it has now (call it after the subcommands are
     * added, as picocli's setters only reach those).
     */
    public static CommandLine configure(CommandLine commandLine) {
        commandLine.setUsageHelpWidth(WIDTH);
        commandLine.setUsageHelpLongOptionsMaxWidth(OPTION_COLUMN_WIDTH);
        sections(commandLine);
        return commandLine;
    }

    private static void sections(CommandLine commandLine) {
        if (commandLine.getCommandSpec().userObject() instanceof Sectioned sectioned) {
            commandLine.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST,
                    help -> optionList(help, sectioned.optionSections()));
        }
        for (CommandLine sub : commandLine.getSubcommands().values()) {
            sections(sub);
        }
    }

    /** The visible options of {@code help}'s command, under the headings of {@code sections}. */
    static String optionList(Help help, List<Section> sections) {
        Map<String, List<OptionSpec>> byHeading = new LinkedHashMap<>();
        for (Section section : sections) {
            byHeading.put(section.heading(), new ArrayList<>());
        }
        List<OptionSpec> standard = new ArrayList<>();
        List<OptionSpec> other = new ArrayList<>();
        for (OptionSpec option : help.commandSpec().options()) {
            if (option.hidden()) {
                continue;
            }
            if (option.usageHelp() || option.versionHelp()) {
                standard.add(option);
                continue;
            }
            sections.stream().filter(s -> s.order() == option.order()).findFirst()
                    .map(s -> byHeading.get(s.heading())).orElse(other).add(option);
        }
        byHeading.put(OTHER_HEADING, other);
        byHeading.put(HELP_HEADING, standard);
        StringBuilder out = new StringBuilder();
        byHeading.forEach((heading, options) -> {
            if (options.isEmpty()) {
                return;
            }
            out.append(System.lineSeparator()).append(help.colorScheme().text(heading + ":")).append(
                    System.lineSeparator());
            // A layout per section (it collects rows), each with the column width of the whole command's options.
            out.append(help.optionListExcludingGroups(options, help.createDefaultLayout(), null,
                    help.parameterLabelRenderer()));
        });
        return out.toString();
    }
}
