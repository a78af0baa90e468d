package io.tenantgateway.agent.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What every command's {@code --help} must look like (both jars' tests use these): lines within
 * {@link UsageHelp#WIDTH}, no picocli default placeholder ({@code <fieldName>}), and command lists whose summaries are
 * whole sentences.
 */
public final class HelpTextRules {
    /** picocli's default value placeholder: the Java field name in angle brackets. */
    private static final Pattern FIELD_NAME_PLACEHOLDER = Pattern.compile("<[a-z][A-Za-z0-9]*>");

    private HelpTextRules() {
    }

    /** Every command line of the tree under {@code root}, itself first, hidden commands included. */
    public static List<CommandLine> commands(CommandLine root) {
        List<CommandLine> out = new ArrayList<>();
        out.add(root);
        for (CommandLine sub : root.getSubcommands().values()) {
            out.addAll(commands(sub));
        }
        return out;
    }

    /** The lines of {@code help} longer than {@link UsageHelp#WIDTH}. */
    public static List<String> longLines(String help) {
        return help.lines().filter(line -> line.length() > UsageHelp.WIDTH).toList();
    }

    /** Each {@code <fieldName>} placeholder in {@code help}. */
    public static List<String> fieldNamePlaceholders(String help) {
        List<String> out = new ArrayList<>();
        Matcher matcher = FIELD_NAME_PLACEHOLDER.matcher(help);
        while (matcher.find()) {
            out.add(matcher.group());
        }
        return out;
    }

    /** The options of {@code spec} that take a value but show picocli's default label ({@code <fieldName>}). */
    public static List<String> optionsWithoutValueLabel(CommandSpec spec) {
        return spec.options().stream().filter(option -> option.arity().max() > 0)
                .filter(option -> option.paramLabel().startsWith("<"))
                .map(OptionSpec::longestName).toList();
    }

    /**
     * The command list of {@code help} ("Commands:"): each command's summary, its wrapped lines joined with one
     * space.
     */
    public static Map<String, String> commandSummaries(String help) {
        Map<String, String> out = new LinkedHashMap<>();
        boolean inList = false;
        String current = null;
        for (String line : help.lines().toList()) {
            if (line.equals("Commands:")) {
                inList = true;
                continue;
            }
            if (!inList) {
                continue;
            }
            if (!line.startsWith("  ")) {
                break;
            }
            if (!line.startsWith("   ")) {
                String[] parts = line.strip().split("\\s+", 2);
                current = parts[0];
                out.put(current, parts.length > 1 ? parts[1] : "");
            } else if (current != null) {
                out.put(current, out.get(current) + " " + line.strip());
            }
        }
        return out;
    }

    /** Whether {@code text} reads as a finished sentence: it ends with a period or a closing parenthesis. */
    public static boolean isWholeSentence(String text) {
        String t = text.strip();
        return t.endsWith(".") || t.endsWith(")");
    }

    /** The first line of {@code spec}'s description, what picocli shows in its parent's command list. */
    public static String summary(CommandSpec spec) {
        String[] description = spec.usageMessage().description();
        return description.length == 0 ? "" : description[0];
    }
}
