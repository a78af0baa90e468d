package io.tenantgateway.agent.cli;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Go {@code flag}/{@code pflag} conventions on top of picocli, for commands that take konnectivity-agent's flags:
 * the single-dash long form ({@code -proxy-server-host=x}, {@code -v=8}) and an unknown flag as one line naming
 * it and the nearest known flag.
 */
public final class GoFlags {
    /** How {@link #message} starts for an unknown flag. */
    public static final String UNKNOWN_FLAG = "unknown flag: ";

    private GoFlags() {
    }

    /**
     * Rewrites {@code -name[=value]} to {@code --name[=value]} when {@code --name} is a long option of one of
     * {@code specs} and {@code -name} is not an option itself (so {@code -v=8} stays as it is). Go accepts both
     * dash forms for every flag; picocli would read {@code -health-server-port=0} as the cluster {@code -h -e …}.
     * Nothing after {@code --} is touched.
     */
    public static String[] normalize(Collection<CommandSpec> specs, String... args) {
        Set<String> names = new TreeSet<>();
        for (CommandSpec spec : specs) {
            for (OptionSpec option : spec.options()) {
                names.addAll(List.of(option.names()));
            }
        }
        String[] out = args.clone();
        for (int i = 0; i < out.length; i++) {
            String arg = out[i];
            if (arg.equals("--")) {
                break;
            }
            if (arg.length() < 3 || arg.charAt(0) != '-' || arg.charAt(1) == '-') {
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            if (!names.contains(name) && names.contains("-" + name)) {
                out[i] = "-" + arg;
            }
        }
        return out;
    }

    /** {@link #normalize(Collection, String...)} for one command. */
    public static String[] normalize(CommandSpec spec, String... args) {
        return normalize(List.of(spec), args);
    }

    /**
     * The message for a parse failure: {@code unknown flag: --enable-lock-controler (did you mean
     * --enable-lock-controller?)} for an unknown option, picocli's own message otherwise.
     */
    public static String message(CommandLine.ParameterException e) {
        return message(e, List.of());
    }

    /**
     * {@link #message(CommandLine.ParameterException)} for flags parsed on behalf of another command: the nearest
     * known flag is looked for among {@code also}'s long options too ({@code doctor} parses {@code run}'s flags, and a
     * typo of its own {@code --check-timeout} should be named as well).
     */
    public static String message(CommandLine.ParameterException e, Collection<CommandSpec> also) {
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched) {
            for (String arg : unmatched.getUnmatched()) {
                if (arg.startsWith("-") && arg.length() > 1) {
                    Set<String> known = new TreeSet<>(longNames(unmatched.getCommandLine().getCommandSpec()));
                    also.forEach(spec -> known.addAll(longNames(spec)));
                    return unknownFlag(arg, known);
                }
            }
        }
        return e.getMessage();
    }

    /** {@code unknown flag: NAME} plus the nearest of {@code known} when one is close enough. */
    static String unknownFlag(String arg, Collection<String> known) {
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        String dashed = name.startsWith("--") ? name : "-" + name;
        return UNKNOWN_FLAG + name + nearest(dashed, known).map(s -> " (did you mean " + s + "?)").orElse("");
    }

    /** The long option names ({@code --name}) of {@code spec}, hidden ones excluded. */
    public static Set<String> longNames(CommandSpec spec) {
        Set<String> names = new TreeSet<>();
        for (OptionSpec option : spec.options()) {
            if (option.hidden()) {
                continue;
            }
            for (String name : option.names()) {
                if (name.startsWith("--")) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    /**
     * The candidate nearest to {@code word} by edit distance (insertions, deletions, substitutions and swaps of
     * neighbours), if it is within a third of the word's length (at least 2): a typo, not a different flag.
     */
    public static Optional<String> nearest(String word, Collection<String> candidates) {
        int limit = Math.max(2, word.length() / 3);
        return candidates.stream().filter(c -> !c.equals(word))
                .map(c -> new Scored(c, distance(word, c)))
                .filter(s -> s.distance <= limit)
                .min(Comparator.comparingInt(Scored::distance).thenComparing(Scored::candidate))
                .map(Scored::candidate);
    }

    private record Scored(String candidate, int distance) {
    }

    /** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of one substring). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
