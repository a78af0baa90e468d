package io.tenantgateway.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The repository's Markdown files read against the code: which {@code --flag} each names and for which command,
 * where each relative link points, and which files it names. {@link DocsTest} asserts on what this finds; its own
 * tests run it on small made-up trees, so each rule is seen failing.
 *
 * <p>A flag is attributed to a command by where it stands: in a code block line or a code span, the program of its
 * shell segment decides ({@code tenant-gateway doctor --x}, {@code java -jar tenant-gateway.jar certs init --x},
 * {@code bin/tenant-gateway lab --x}, a span starting with a command name such as {@code run --x}; segments split at
 * {@code |}, {@code &&}, {@code ;}, {@code $(} and {@code kubectl exec}'s {@code --}), and the flag must be that
 * command's ({@code doctor} takes {@code run}'s flags too). A known external program ({@code kubectl}, {@code helm},
 * …) takes only the flags of its allow-list. Anywhere else (prose, tables, a span holding only a flag) the flag must
 * be one of some command's or an allow-listed external one.
 */
final class MarkdownDocs {
    /** Where a flag or a link was found. */
    record Problem(Path file, int line, String message) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + message;
        }
    }

    /**
     * External programs' flags that the docs name on purpose, per program. Anything else after these programs (or
     * in prose, where no program is named) must be one of ours. Add a flag here only when a doc names it for that
     * tool, never to silence a flag of ours.
     */
    static final Map<String, Set<String>> EXTERNAL_FLAGS = external();

    private static Map<String, Set<String>> external() {
        Map<String, Set<String>> tools = new TreeMap<>();
        // ANP's konnectivity-server: Kamaji's settings, upstream's strategies, the agent listener the lab mirrors
        tools.put("konnectivity-server", Set.of("--uds-name", "--server-port", "--agent-port", "--cluster-ca-cert",
                "--authentication-audience", "--proxy-strategies"));
        // Kubernetes' own binaries: the component-base logging flag our --log-format follows; kubelet's pod limit
        tools.put("kube-apiserver", Set.of("--logging-format"));
        tools.put("kubelet", Set.of("--max-pods"));
        tools.put("helm", Set.of("--set", "--reuse-values", "--strict"));
        // kubectl patch --subresource=status (kubectl >= 1.24): removing reported node capacity by hand
        tools.put("kubectl", Set.of("--kubeconfig", "--from-file", "--type", "--patch-file", "--subresource"));
        tools.put("docker", Set.of("--build-arg"));
        // the JDK's flight recorder reader (profiling how-tos); java itself takes single-dash options only here
        tools.put("jfr", Set.of("--events", "--json"));
        tools.put("java", Set.of());
        // what the device discovery runs and its recorded outputs
        tools.put("nvidia-smi", Set.of("--query-gpu", "--format", "--list-gpus"));
        // the vendor device plugins VENDOR-PLUGINS.md describes (Go flags with underscores, as upstream spells them)
        tools.put("dcu-vgpu-device-plugin", Set.of("--pulse"));
        tools.put("ascend-device-plugin", Set.of("--node_name", "--check_idle_vnpu_interval", "--report_time_offset",
                "--config_file", "--node_config_file"));
        // bin/test's own steps: Maven's keep-going switch and apt's flag against recommended packages
        tools.put("mvn", Set.of("--fail-at-end"));
        tools.put("apt-get", Set.of("--no-install-recommends"));
        // programs the docs run without naming any of their long flags: whatever follows them must be added here
        for (String tool : List.of("git", "kustomize", "chromium", "curl", "kind")) {
            tools.put(tool, Set.of());
        }
        return Map.copyOf(tools);
    }

    /** Other names of the same external programs. */
    private static final Map<String, String> ALIASES = Map.of("proxy-server", "konnectivity-server",
            "proxy-agent-upstream", "konnectivity-agent", "chromium-browser", "chromium", "google-chrome", "chromium",
            "./mvnw", "mvn", "podman", "docker");

    private static final Pattern FLAG = Pattern.compile("(?<![A-Za-z0-9_./-])--([a-z0-9][a-z0-9_-]*)");
    /** How the docs write "some flag" ({@code --flag: value (expected: …)}, {@code doctor --flag}). */
    private static final String PLACEHOLDER = "--flag";
    /** A line quoting the CLI's answer to a mistyped flag (or the line after one saying so) names it on purpose. */
    private static final Pattern QUOTES_A_TYPO = Pattern.compile("unknown flag|did you mean|a typo such as");
    private static final Pattern SUBSTITUTION = Pattern.compile("\\$\\(([^()]*)\\)");
    private static final Pattern URL = Pattern.compile("\\b[a-z][a-z0-9+.-]*://\\S+");
    private static final Pattern FENCE = Pattern.compile("^\\s{0,3}(```+|~~~+)");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
    private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?"
            + "(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE = Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s+<?(\\S+?)>?(\\s.*)?$");
    private static final Pattern HEADING = Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
    private static final Pattern MD_NAME = Pattern.compile("(?<![A-Za-z0-9_.-])([A-Za-z0-9_][A-Za-z0-9_.-]*\\.md)"
            + "(?![A-Za-z0-9_])");
    private static final Pattern SHELL_SPLIT = Pattern.compile("\\|\\||&&|\\||;|`");
    /** Text that points outside the repository, or at this machine, whatever surrounds it. */
    static final List<String> FORBIDDEN = List.of("../shared", "shared/spec", "shared/style-guide", "/work/",
            "/home/", "/root/", "/.m2/");

    final Path root;
    /** Command path ({@code run}, {@code certs init}, {@code ""} for the root) → its long option names. */
    final Map<String, Set<String>> commands = new TreeMap<>();
    /** Command path → its subcommands' names (for walking {@code tenant-gateway certs init}). */
    private final Map<String, Set<String>> subcommands = new HashMap<>();
    private final Set<String> anyCommandFlag = new TreeSet<>();
    private final Set<String> anyExternalFlag = new TreeSet<>();
    private final Map<Path, Set<String>> anchors = new HashMap<>();
    private final Set<String> fileNames = new HashSet<>();
    private final List<Path> files;

    /**
     * @param root          the tree whose {@code *.md} files are read ({@code target/} and {@code .git} skipped)
     * @param commandLines  the CLIs' root commands (the runtime's and the tools'), merged under one root
     */
    MarkdownDocs(Path root, CommandLine... commandLines) {
        this.root = root.toAbsolutePath().normalize();
        for (CommandLine commandLine : commandLines) {
            add("", commandLine);
        }
        // doctor takes every flag of run (the DaemonSet's arguments pasted), plus its own.
        if (commands.containsKey("doctor") && commands.containsKey("run")) {
            commands.get("doctor").addAll(commands.get("run"));
        }
        commands.values().forEach(anyCommandFlag::addAll);
        EXTERNAL_FLAGS.values().forEach(anyExternalFlag::addAll);
        try (Stream<Path> walk = Files.walk(this.root)) {
            List<Path> all = walk.filter(p -> !skipped(this.root.relativize(p))).toList();
            all.forEach(p -> fileNames.add(p.getFileName() == null ? "" : p.getFileName().toString()));
            files = all.stream().filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p)).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean skipped(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.equals("target") || name.equals(".git") || name.equals("node_modules")) {
                return true;
            }
        }
        return false;
    }

    private void add(String path, CommandLine commandLine) {
        Set<String> names = commands.computeIfAbsent(path, k -> new TreeSet<>());
        for (OptionSpec option : commandLine.getCommandSpec().options()) {
            for (String name : option.names()) {
                if (name.startsWith("--")) {
                    names.add(name);
                }
            }
        }
        commandLine.getSubcommands().forEach((name, sub) -> {
            subcommands.computeIfAbsent(path, k -> new TreeSet<>()).add(name);
            add(path.isEmpty() ? name : path + " " + name, sub);
        });
    }

    List<Path> files() {
        return files;
    }

    Path relative(Path file) {
        return root.relativize(file);
    }

    /** The lines of {@code file}, each with whether it is inside a fenced code block. */
    private static List<Line> lines(Path file) {
        List<String> text;
        try {
            text = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Line> lines = new ArrayList<>();
        String fence = null;
        for (int i = 0; i < text.size(); i++) {
            String line = text.get(i);
            Matcher m = FENCE.matcher(line);
            if (fence == null && m.find()) {
                fence = m.group(1).substring(0, 3);
                lines.add(new Line(i + 1, line, false, true));
            } else if (fence != null && line.strip().startsWith(fence)) {
                fence = null;
                lines.add(new Line(i + 1, line, false, true));
            } else {
                lines.add(new Line(i + 1, line, fence != null, false));
            }
        }
        return lines;
    }

    private record Line(int number, String text, boolean code, boolean fence) {
    }

    // ---- flags ----

    /** Every {@code --flag} in the docs that the command it is named for (or, unattributed, any) lacks. */
    List<Problem> flagProblems() {
        List<Problem> problems = new ArrayList<>();
        for (Path file : files) {
            List<Line> lines = lines(file);
            for (int i = 0; i < lines.size(); i++) {
                Line line = lines.get(i);
                if (line.fence() || QUOTES_A_TYPO.matcher(line.text()).find()
                        || (i > 0 && QUOTES_A_TYPO.matcher(lines.get(i - 1).text()).find())) {
                    continue;
                }
                if (line.code()) {
                    // a shell command continued over lines with '\' is one command
                    StringBuilder command = new StringBuilder(line.text());
                    while (command.toString().endsWith("\\") && i + 1 < lines.size() && lines.get(i + 1).code()) {
                        command.setLength(command.length() - 1);
                        command.append(' ').append(lines.get(++i).text());
                    }
                    String text = command.toString();
                    int comment = shellComment(text);
                    if (comment >= 0) {
                        prose(file, line.number(), text.substring(comment), problems);
                        text = text.substring(0, comment);
                    }
                    code(file, line.number(), text, problems);
                    continue;
                }
                StringBuilder prose = new StringBuilder();
                Matcher span = CODE_SPAN.matcher(line.text());
                int last = 0;
                while (span.find()) {
                    prose.append(line.text(), last, span.start()).append(' ');
                    code(file, line.number(), span.group(2), problems);
                    last = span.end();
                }
                prose.append(line.text().substring(last));
                prose(file, line.number(), prose.toString(), problems);
            }
        }
        return problems;
    }

    private static int shellComment(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == '#' && (i == 0 || Character.isWhitespace(text.charAt(i - 1)))) {
                return i;
            }
        }
        return -1;
    }

    private void prose(Path file, int line, String text, List<Problem> problems) {
        for (String flag : flags(text)) {
            if (!anyCommandFlag.contains(flag) && !anyExternalFlag.contains(flag) && !flag.equals(PLACEHOLDER)) {
                problems.add(new Problem(relative(file), line, flag + ": no command has this flag"
                        + nearest(flag, anyCommandFlag)));
            }
        }
    }

    /** A code block line or a code span: each shell segment checked against its program's flags. */
    private void code(Path file, int line, String text, List<Problem> problems) {
        // $(command) is a command of its own: checked alone, and a word of the one around it
        for (Matcher m = SUBSTITUTION.matcher(text); m.find(); m = SUBSTITUTION.matcher(text)) {
            code(file, line, m.group(1), problems);
            text = text.substring(0, m.start()) + "SUBSTITUTED" + text.substring(m.end());
        }
        for (String piece : SHELL_SPLIT.split(text)) {
            List<String> tokens = new ArrayList<>();
            for (String token : piece.strip().split("\\s+")) {
                tokens.add(token.replaceAll("^\\(+|\\)+$", "")); // a subshell's parentheses
            }
            // kubectl exec … -- PROGRAM: what follows the lone '--' is another program
            List<List<String>> segments = new ArrayList<>();
            List<String> current = new ArrayList<>();
            for (String token : tokens) {
                if (token.equals("--")) {
                    segments.add(current);
                    current = new ArrayList<>();
                } else if (!token.isEmpty()) {
                    current.add(token);
                }
            }
            segments.add(current);
            for (List<String> segment : segments) {
                segment(file, line, segment, problems);
            }
        }
    }

    private void segment(Path file, int line, List<String> tokens, List<Problem> problems) {
        int start = 0;
        while (start < tokens.size() && (tokens.get(start).matches("[A-Za-z_][A-Za-z0-9_]*=.*")
                || Set.of("sudo", "exec", "env", "time", "nohup", "$", "!").contains(tokens.get(start)))) {
            start++;
        }
        if (start >= tokens.size()) {
            return;
        }
        String program = tokens.get(start);
        String base = program.substring(program.lastIndexOf('/') + 1);
        base = ALIASES.getOrDefault(program, ALIASES.getOrDefault(base, base));
        int ours = -1;
        if (base.equals("tenant-gateway") || base.equals("proxy-agent")) {
            ours = start + 1;
        } else if (base.equals("java")) {
            for (int i = start + 1; i < tokens.size(); i++) {
                String token = tokens.get(i);
                if (token.endsWith("tenant-gateway.jar") || token.endsWith("tenant-gateway-tools.jar")) {
                    check(file, line, "java", EXTERNAL_FLAGS.get("java"), tokens.subList(start + 1, i), problems);
                    ours = i + 1;
                    break;
                }
            }
        } else if (subcommands.getOrDefault("", Set.of()).contains(base) && start == 0) {
            ours = start;
        }
        if (ours >= 0) {
            String path = "";
            int i = ours;
            while (i < tokens.size() && subcommands.getOrDefault(path, Set.of()).contains(tokens.get(i))) {
                path = path.isEmpty() ? tokens.get(i) : path + " " + tokens.get(i);
                i++;
            }
            String name = path.isEmpty() ? "tenant-gateway" : path;
            check(file, line, name, commands.get(path), tokens.subList(i, tokens.size()), problems);
            return;
        }
        Set<String> external = EXTERNAL_FLAGS.get(base);
        if (external != null) {
            check(file, line, base, external, tokens.subList(start + 1, tokens.size()), problems);
            return;
        }
        prose(file, line, String.join(" ", tokens), problems);
    }

    private void check(Path file, int line, String command, Set<String> known, List<String> tokens,
                       List<Problem> problems) {
        for (String flag : flags(String.join(" ", tokens))) {
            if (!known.contains(flag) && !flag.equals(PLACEHOLDER)) {
                problems.add(new Problem(relative(file), line, flag + ": no flag of " + command + nearest(flag,
                        known)));
            }
        }
    }

    private static List<String> flags(String text) {
        List<String> flags = new ArrayList<>();
        Matcher m = FLAG.matcher(text);
        while (m.find()) {
            String name = m.group(1);
            while (name.endsWith("-")) {
                name = name.substring(0, name.length() - 1);
            }
            flags.add("--" + name);
        }
        return flags;
    }

    private static String nearest(String flag, Collection<String> known) {
        return io.tenantgateway.agent.cli.GoFlags.nearest(flag, known).map(n -> " (did you mean " + n + "?)")
                .orElse("");
    }

    /** Whether {@code flag} appears as a whole token in a table row of one of {@code docs}. */
    static boolean inTableRow(String flag, Collection<Path> docs) {
        Pattern token = Pattern.compile("(?<![A-Za-z0-9_-])" + Pattern.quote(flag) + "(?![A-Za-z0-9_-])");
        for (Path doc : docs) {
            for (Line line : lines(doc)) {
                if (!line.code() && line.text().stripLeading().startsWith("|") && token.matcher(line.text()).find()) {
                    return true;
                }
            }
        }
        return false;
    }

    // ---- links and file names ----

    /**
     * Every relative link whose target (or heading anchor) does not exist in the repository, every text naming a
     * place outside it ({@link #FORBIDDEN}), and every {@code NAME.md} named in text that no file of the repository
     * is called.
     */
    List<Problem> linkProblems() {
        List<Problem> problems = new ArrayList<>();
        for (Path file : files) {
            for (Line line : lines(file)) {
                for (String forbidden : FORBIDDEN) {
                    if (line.text().contains(forbidden)) {
                        problems.add(new Problem(relative(file), line.number(), "names " + forbidden
                                + ", outside the repository: write the fact here instead"));
                    }
                }
                Matcher name = MD_NAME.matcher(URL.matcher(line.text()).replaceAll(""));
                while (name.find()) {
                    if (!fileNames.contains(name.group(1))) {
                        problems.add(new Problem(relative(file), line.number(), name.group(1)
                                + ": no file of the repository has this name"));
                    }
                }
                if (line.code() || line.fence()) {
                    continue;
                }
                String text = CODE_SPAN.matcher(line.text()).replaceAll("");
                List<String> targets = new ArrayList<>();
                Matcher link = LINK.matcher(text);
                while (link.find()) {
                    targets.add(link.group(1));
                }
                Matcher reference = REFERENCE.matcher(text);
                if (reference.matches()) {
                    targets.add(reference.group(1));
                }
                for (String target : targets) {
                    String problem = linkProblem(file, target);
                    if (problem != null) {
                        problems.add(new Problem(relative(file), line.number(), problem));
                    }
                }
            }
        }
        return problems;
    }

    private String linkProblem(Path file, String target) {
        if (target.matches("[A-Za-z][A-Za-z0-9+.-]*:.*")) {
            return null; // https:, mailto:
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!resolved.startsWith(root)) {
            return target + ": outside the repository";
        }
        if (!Files.exists(resolved)) {
            return target + ": no such file in the repository";
        }
        if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
            return target + ": no heading with this anchor in " + relative(resolved);
        }
        return null;
    }

    /** The anchors GitHub makes for {@code file}'s headings (and explicit {@code <a name>}s). */
    private Set<String> anchors(Path file) {
        return anchors.computeIfAbsent(file, f -> {
            Set<String> out = new HashSet<>();
            Map<String, Integer> seen = new LinkedHashMap<>();
            for (Line line : lines(f)) {
                if (line.code() || line.fence()) {
                    continue;
                }
                Matcher explicit = HTML_ANCHOR.matcher(line.text());
                while (explicit.find()) {
                    out.add(explicit.group(1));
                }
                Matcher heading = HEADING.matcher(line.text());
                if (heading.matches()) {
                    String slug = slug(heading.group(2));
                    int n = seen.merge(slug, 1, Integer::sum) - 1;
                    out.add(n == 0 ? slug : slug + "-" + n);
                }
            }
            return out;
        });
    }

    /** GitHub's heading anchor: link text kept, lower case, punctuation dropped, spaces to hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1");
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
    }
}
