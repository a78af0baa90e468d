package io.tenantgateway.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.main.TenantGatewayCommand;
import io.tenantgateway.agent.ops.ProbeCommand;
import io.tenantgateway.agent.ops.ProbeStage;
import io.tenantgateway.tools.lab.LabOptions;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The repository's Markdown against the code, so the docs cannot drift from it: every {@code --flag} they name
 * exists on the command it is named for ({@link MarkdownDocs} says how a flag is attributed), every relative link
 * and heading anchor resolves, nothing points outside the repository, every flag of {@code run} is documented in a
 * table, and the claims a test can read (the lab's check count, the exit codes) match the constants. The last tests
 * run the same checker on made-up trees, so each rule is seen failing.
 */
@Timeout(60)
class DocsTest {
    /** The repository: Surefire runs in the module's directory. */
    private static final Path ROOT = Path.of(System.getProperty("user.dir")).resolve("..").toAbsolutePath().normalize();
    private static MarkdownDocs docs;

    @BeforeAll
    static void readDocs() {
        assertThat(ROOT.resolve("pom.xml")).exists();
        assertThat(ROOT.resolve("agent/README.md")).exists();
        docs = new MarkdownDocs(ROOT, cli(), new CommandLine(new ToolsCommand()));
        assertThat(docs.files()).as("the Markdown files found").hasSizeGreaterThan(10);
    }

    private static CommandLine cli() {
        return new CommandLine(new TenantGatewayCommand());
    }

    @Test
    void everyFlagTheDocsNameExistsOnItsCommand() {
        assertThat(docs.commands).as("commands read from the CLIs")
                .containsKeys("run", "doctor", "probe", "webhook", "certs init", "annotations decode", "lab", "bench");
        assertThat(docs.flagProblems()).as("flags the docs name that no command (or not the one named) has").isEmpty();
    }

    @Test
    void everyRelativeLinkResolvesAndNothingPointsOutsideTheRepository() {
        assertThat(docs.linkProblems()).as("links, anchors and file names").isEmpty();
    }

    /** {@code agent/README.md} is the flag reference (or any {@code agent/*.md} it is split into). */
    @Test
    void everyFlagOfRunIsInATableOfTheAgentDocs() throws IOException {
        List<Path> agentDocs = agentDocs();
        List<String> undocumented = new ArrayList<>();
        for (OptionSpec option : new CommandLine(new AgentCommand()).getCommandSpec().options()) {
            if (option.hidden() || option.usageHelp() || option.versionHelp()) {
                continue;
            }
            // any of its names: -v is documented as -v
            if (Arrays.stream(option.names()).noneMatch(name -> MarkdownDocs.inTableRow(name, agentDocs))) {
                undocumented.add(option.longestName());
            }
        }
        assertThat(undocumented).as("run's flags missing from every table of %s", agentDocs).isEmpty();
    }

    private static List<Path> agentDocs() throws IOException {
        try (var list = Files.list(ROOT.resolve("agent"))) {
            return list.filter(p -> p.toString().endsWith(".md")).sorted().toList();
        }
    }

    @Test
    void theLabsCheckCountIsTheOneTheDocsClaim() throws IOException {
        // "lab … eleven checks" (not "the reference lab's eight checks": the lab this project grew from)
        Pattern claim = Pattern.compile("\\blab\\b(?!'s)[^|.\\n]*?\\b(" + String.join("|", NUMBERS)
                + "|\\d+) checks\\b");
        Map<String, Integer> claims = new TreeMap<>();
        for (Path file : docs.files()) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = claim.matcher(lines.get(i));
                while (m.find()) {
                    claims.put(docs.relative(file) + ":" + (i + 1), number(m.group(1)));
                }
            }
        }
        assertThat(claims).as("claims of the lab's check count").hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy((where, count) -> assertThat(count).as(where).isEqualTo(LabOptions.CHECK_COUNT));

        // tools/README.md's table has one row per check, numbered 1..N
        List<Integer> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(ROOT.resolve("tools/README.md"))) {
            if (line.startsWith("| # | check |")) {
                inTable = true;
            } else if (inTable && line.startsWith("|")) {
                Matcher row = Pattern.compile("^\\| (\\d+) \\|").matcher(line);
                if (row.find()) {
                    rows.add(Integer.parseInt(row.group(1)));
                }
            } else if (inTable) {
                break;
            }
        }
        assertThat(rows).as("tools/README.md's check table")
                .isEqualTo(IntStream.rangeClosed(1, LabOptions.CHECK_COUNT).boxed().toList());
    }

    private static final List<String> NUMBERS = List.of("one", "two", "three", "four", "five", "six", "seven", "eight",
            "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen");

    private static int number(String word) {
        int i = NUMBERS.indexOf(word.toLowerCase(java.util.Locale.ROOT));
        return i >= 0 ? i + 1 : Integer.parseInt(word);
    }

    /**
     * README.md's exit code sentence names exactly {@link ExitCodes}' codes and {@code probe}'s range;
     * agent/README.md's probe table and {@code probe --help} list exactly {@link ProbeStage}'s codes, with the stage
     * each belongs to.
     */
    @Test
    void theExitCodesTheDocsListAreTheCodes() throws Exception {
        Set<Integer> common = new TreeSet<>();
        for (Field field : ExitCodes.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class) {
                common.add(field.getInt(null));
            }
        }
        Map<Integer, String> probe = new TreeMap<>();
        for (ProbeStage stage : ProbeStage.values()) {
            probe.put(stage.exitCode(), stage.label());
        }
        probe.put(ProbeStage.WEBHOOK_REFUSED_EXIT_CODE, ProbeStage.WEBHOOK.label());

        String readme = String.join(" ", Files.readAllLines(ROOT.resolve("README.md")));
        Matcher sentence = Pattern.compile("Exit codes: (.*?); `probe` exits `(\\d+)`–`(\\d+)`").matcher(readme);
        assertThat(sentence.find()).as("README.md: 'Exit codes: …; `probe` exits `A`–`B`'").isTrue();
        Set<Integer> documented = new TreeSet<>();
        Matcher code = Pattern.compile("`(\\d+)` [a-z]").matcher(sentence.group(1));
        while (code.find()) {
            documented.add(Integer.parseInt(code.group(1)));
        }
        assertThat(documented).as("README.md's exit codes").isEqualTo(common);
        assertThat(sentence.group(1)).as("README.md: probe's codes are its own, not `1`").doesNotContain("probe");
        assertThat(IntStream.rangeClosed(Integer.parseInt(sentence.group(2)), Integer.parseInt(sentence.group(3)))
                .boxed().collect(Collectors.toSet())).as("README.md's probe range").isEqualTo(probe.keySet());

        // the probe table, in agent/README.md or whichever agent/*.md it moves to
        Map<Integer, String> table = new TreeMap<>();
        for (Path doc : agentDocs()) {
            boolean inTable = false;
            for (String line : Files.readAllLines(doc)) {
                if (line.startsWith("| exit | stage |")) {
                    inTable = true;
                } else if (inTable && line.startsWith("|")) {
                    Matcher row = Pattern.compile("^\\| (\\d+) \\| (?:`([a-z]+)`|–) \\|").matcher(line);
                    if (row.find()) {
                        table.put(Integer.parseInt(row.group(1)), row.group(2) == null ? "" : row.group(2));
                    }
                } else {
                    inTable = false;
                }
            }
        }
        Map<Integer, String> expected = new TreeMap<>(probe);
        expected.put(ExitCodes.OK, "");
        expected.put(ExitCodes.USAGE, "");
        assertThat(table).as("agent docs' probe exit codes").isEqualTo(expected);

        CommandLine probeCommand = new CommandLine(new ProbeCommand());
        Set<Integer> help = probeCommand.getCommandSpec().usageMessage().exitCodeList().keySet().stream()
                .map(k -> Integer.parseInt(k.strip())).collect(Collectors.toCollection(TreeSet::new));
        assertThat(help).as("probe --help's exit codes").isEqualTo(expected.keySet());
    }

    // ---- the checker itself, on made-up trees: each rule fails where it should ----

    @TempDir
    Path scratch;

    private MarkdownDocs scratch(String file, String markdown) throws IOException {
        Path path = scratch.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, markdown);
        Files.writeString(scratch.resolve("README.md"), "# Top\n\n## Running the agent\n");
        return new MarkdownDocs(scratch, cli(), new CommandLine(new ToolsCommand()));
    }

    @Test
    void aFlagNoCommandHasFails() throws IOException {
        MarkdownDocs tree = scratch("agent/README.md", """
                | flag | default |
                |---|---|
                | `--no-such-flag` | – |
                | `--proxy-server-port` | `8091` |
                """);
        assertThat(tree.flagProblems()).extracting(Object::toString)
                .containsExactly("agent/README.md:3: --no-such-flag: no command has this flag");
    }

    @Test
    void aFlagOfAnotherCommandFailsWhereACommandIsNamed() throws IOException {
        MarkdownDocs tree = scratch("doc.md", """
                Check with `doctor --nvidia-smi-timeout=5s`, or `tenant-gateway doctor --check-timout=5s --json`.

                ```sh
                java -jar agent/target/tenant-gateway.jar certs init --out "$d" --webhook-dns x --json
                bin/tenant-gateway lab --json --uds-name x   # --keep-running stops at Ctrl-C
                kubectl -n kube-system exec -i ds/tenant-gateway -- tenant-gateway annotations decode --output=table -
                ```
                Upstream's `--uds-name` is fine in prose, `--proxy-server-prot` is not.
                """);
        assertThat(tree.flagProblems()).extracting(Object::toString).containsExactly(
                "doc.md:1: --nvidia-smi-timeout: no flag of doctor",
                "doc.md:1: --check-timout: no flag of doctor (did you mean --check-timeout?)",
                "doc.md:4: --json: no flag of certs init",
                "doc.md:5: --uds-name: no flag of lab",
                "doc.md:8: --proxy-server-prot: no command has this flag (did you mean --proxy-server-port?)");
    }

    @Test
    void aLinkOutsideTheRepositoryOrToNothingFails() throws IOException {
        MarkdownDocs tree = scratch("tunnel/README.md", """
                Wire facts: [spec](../shared/spec/x.md), see also `shared/spec/konnectivity.md` and hami.md.
                [ok](../README.md#running-the-agent) · [gone](../README.md#no-such-heading) · [none](DESIGN.md)
                [web](https://example.com/x.md) · [up](../../outside.md)
                """);
        assertThat(tree.linkProblems()).extracting(Object::toString).containsExactly(
                "tunnel/README.md:1: names ../shared, outside the repository: write the fact here instead",
                "tunnel/README.md:1: names shared/spec, outside the repository: write the fact here instead",
                "tunnel/README.md:1: x.md: no file of the repository has this name",
                "tunnel/README.md:1: konnectivity.md: no file of the repository has this name",
                "tunnel/README.md:1: hami.md: no file of the repository has this name",
                "tunnel/README.md:1: ../shared/spec/x.md: no such file in the repository",
                "tunnel/README.md:2: DESIGN.md: no file of the repository has this name",
                "tunnel/README.md:2: ../README.md#no-such-heading: no heading with this anchor in README.md",
                "tunnel/README.md:2: DESIGN.md: no such file in the repository",
                "tunnel/README.md:3: outside.md: no file of the repository has this name",
                "tunnel/README.md:3: ../../outside.md: outside the repository");
    }

    @Test
    void githubAnchors() {
        assertThat(MarkdownDocs.slug("probe: `tenant-gateway probe`")).isEqualTo("probe-tenant-gateway-probe");
        assertThat(MarkdownDocs.slug("Lab: `tenant-gateway lab`")).isEqualTo("lab-tenant-gateway-lab");
        assertThat(MarkdownDocs.slug("Configuration (`TunnelConfig`)")).isEqualTo("configuration-tunnelconfig");
        assertThat(MarkdownDocs.slug("What a server can make the agent hold (issue 24)"))
                .isEqualTo("what-a-server-can-make-the-agent-hold-issue-24");
    }
}
