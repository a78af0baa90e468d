package io.tenantgateway.agent;

import static io.tenantgateway.agent.testing.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The built jar's log output as operators read upstream's (issue #17): klog's text lines with upstream's messages and
 * keys, component-base's JSON with every value as a field, and {@code --log-file} with rotation.
 */
@Timeout(180)
class KlogOutputIT {
    /** klog's header: severity, MMDD hh:mm:ss.uuuuuu, pid (right-aligned in 7), file:line], quoted message, pairs. */
    static final Pattern KLOG = Pattern.compile(
            "^([IWEF])(\\d{2})(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2})\\.(\\d{6}) ([ \\d]{7}) ([A-Za-z0-9_$]+\\.java):(\\d+)]"
                    + " \"((?:[^\"\\\\]|\\\\.)*+)\"(.*)$");
    /** One {@code key=value} pair: a quoted string or a bare word (numbers, booleans). */
    static final Pattern PAIR = Pattern.compile(" ([A-Za-z_][A-Za-z0-9_.-]*)=(\"(?:[^\"\\\\]|\\\\.)*+\"|[^ \"]++)");

    @TempDir
    Path dir;

    private TunnelTestbed testbed;
    private AgentProcess agent;

    @AfterEach
    void tearDown() {
        if (agent != null) {
            agent.close();
        }
        if (testbed != null) {
            testbed.close();
        }
    }

    /** Kamaji's arguments without its {@code -v=8}: upstream's default verbosity (4). */
    private List<String> defaultVerbosityArgs() {
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add(TunnelTestbed.DIAL_LOOPBACK); // dials the echo target / its webhook on 127.0.0.1
        args.removeIf(arg -> arg.startsWith("-v="));
        return args;
    }

    @Test
    void textLinesFollowKlogsGrammarWithUpstreamsMessagesAndKeys() throws Exception {
        testbed = new TunnelTestbed(dir);
        agent = AgentProcess.start(defaultVerbosityArgs());
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("hello")).isEqualTo("hello");
        }
        await().atMost(WAIT).until(() -> !agent.lines("Endpoint connection established").isEmpty());
        String log = String.join("\n", agent.log);

        List<Map<String, String>> lines = new ArrayList<>();
        for (String line : agent.log) {
            if (line.startsWith("\t")) {
                continue; // a Java stack trace under an error line
            }
            Matcher header = KLOG.matcher(line);
            assertThat(header.matches()).as("klog line: %s%nlog:%n%s", line, log).isTrue();
            assertThat(header.group(8).strip()).isEqualTo(Long.toString(agent.process.pid()));
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("severity", header.group(1));
            fields.put("caller", header.group(9) + ":" + header.group(10));
            fields.put("msg", header.group(11));
            Matcher pair = PAIR.matcher(header.group(12));
            int end = 0;
            while (pair.find() && pair.start() == end) {
                fields.put(pair.group(1), pair.group(2));
                end = pair.end();
            }
            assertThat(end).as("only key=value pairs after the message: %s", line).isEqualTo(header.group(12).length());
            lines.add(fields);
        }

        Map<String, String> connect = only(lines, "Connect to server", log);
        assertThat(connect).containsEntry("severity", "I").containsEntry("serverID", "\"kas-0\"");
        assertThat(connect.get("caller")).matches("TunnelClient\\.java:\\d+");
        Map<String, String> serve = only(lines, "Start serving", log);
        assertThat(serve).containsEntry("serverID", "\"kas-0\"").containsKey("agentID");
        Map<String, String> dial = only(lines, "Received DIAL_REQ", log);
        assertThat(dial).containsEntry("serverID", "\"kas-0\"").containsEntry("agentID", serve.get("agentID"))
                .containsEntry("dialAddress", "\"" + testbed.echo.hostPort() + "\"");
        assertThat(dial.get("dialID")).matches("-?\\d+");
        Map<String, String> established = only(lines, "Endpoint connection established", log);
        assertThat(established).containsEntry("dialID", dial.get("dialID"))
                .containsEntry("dialAddress", dial.get("dialAddress"));
        assertThat(established.get("connectionID")).matches("\\d+");
        // -v=4: our own per-connection DEBUG lines (V5) stay out, as at upstream's default.
        assertThat(agent.lines("DIAL_CLS")).isEmpty();
    }

    @Test
    void jsonLinesCarryEveryValueAsAField() throws Exception {
        testbed = new TunnelTestbed(dir);
        List<String> args = defaultVerbosityArgs();
        args.add("--log-format=json");
        agent = AgentProcess.start(args);
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            assertThat(tunnel.echo("hello")).isEqualTo("hello");
        }
        await().atMost(WAIT).until(() -> !agent.lines("Endpoint connection established").isEmpty());
        String log = String.join("\n", agent.log);

        JsonMapper json = JsonMapper.builder().build();
        List<JsonNode> objects = new ArrayList<>();
        for (String line : agent.log) {
            JsonNode node = json.readTree(line);
            assertThat(node.isObject()).as("JSON object: %s", line).isTrue();
            assertThat(node.get("ts").isNumber()).as("ts: %s", line).isTrue();
            assertThat(node.get("ts").asDouble()).isGreaterThan(1.6e12);
            assertThat(node.get("caller").asString()).as(line).matches("[A-Za-z0-9_$]+\\.java:\\d+");
            assertThat(node.has("msg")).as(line).isTrue();
            assertThat(node.has("v") || node.has("level")).as(line).isTrue();
            if (node.has("v")) {
                assertThat(node.get("v").asInt()).as("-v=4: %s", line).isLessThanOrEqualTo(4);
            }
            objects.add(node);
        }
        JsonNode connect = objects.stream().filter(o -> o.get("msg").asString().equals("Connect to server"))
                .findFirst().orElseThrow(() -> new AssertionError("Connect to server in:\n" + log));
        assertThat(connect.get("serverID").asString()).isEqualTo("kas-0");
        assertThat(connect.get("v").asInt()).isEqualTo(2);
        JsonNode dial = objects.stream().filter(o -> o.get("msg").asString().equals("Received DIAL_REQ"))
                .findFirst().orElseThrow(() -> new AssertionError("Received DIAL_REQ in:\n" + log));
        assertThat(dial.get("v").asInt()).isEqualTo(3);
        assertThat(dial.get("dialID").isNumber()).isTrue();
        assertThat(dial.get("dialAddress").asString()).isEqualTo(testbed.echo.hostPort());
        // Our own messages too: no {} placeholders left, the values are fields.
        assertThat(objects).noneMatch(o -> o.get("msg").asString().contains("{}"));
        JsonNode health = objects.stream().filter(o -> o.get("msg").asString().startsWith("health server listening"))
                .findFirst().orElseThrow(() -> new AssertionError("health server listening in:\n" + log));
        assertThat(health.get("address").asString()).matches(".+:\\d+");
    }

    @Test
    void logFileIsWrittenAndRotatesAtItsMaxSize() throws Exception {
        testbed = new TunnelTestbed(dir);
        Path file = dir.resolve("agent.log");
        Path rotated = dir.resolve("agent.log.1");
        List<String> args = defaultVerbosityArgs();
        // -v=9: per-packet lines and library debug, enough volume to pass 1 MB (klog's unit) quickly.
        args.addAll(List.of("-v=9", "--logtostderr=false", "--log-file=" + file, "--log-file-max-size=1"));
        agent = AgentProcess.start(args);
        await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
        String payload = "x".repeat(2000);
        try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
            await().atMost(Duration.ofSeconds(90)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                    .until(() -> {
                        assertThat(tunnel.echo(payload)).isEqualTo(payload);
                        return Files.exists(rotated);
                    });
        }
        long mb = 1024 * 1024;
        assertThat(Files.size(rotated)).as("rotated at --log-file-max-size=1 (MB)").isGreaterThanOrEqualTo(mb)
                .isLessThan(3 * mb);
        assertThat(Files.exists(file)).isTrue();
        List<String> all = new ArrayList<>(Files.readAllLines(rotated));
        all.addAll(Files.readAllLines(file));
        assertThat(all).anyMatch(line -> line.contains("\"Connect to server\" serverID=\"kas-0\""));
        assertThat(all.stream().filter(line -> !line.startsWith("\t")))
                .allSatisfy(line -> assertThat(line).matches(KLOG));
        // --logtostderr=false: stderr gets only what reaches --stderrthreshold (ERROR by default).
        assertThat(agent.log).noneMatch(line -> line.contains("Connect to server"));
        assertThat(agent.log).allSatisfy(line -> assertThat(line).matches("^(E|F|\\t).*"));
    }

    private static Map<String, String> only(List<Map<String, String>> lines, String message, String log) {
        List<Map<String, String>> found = lines.stream().filter(l -> message.equals(l.get("msg"))).toList();
        assertThat(found).as("\"%s\" once in:%n%s", message, log).hasSize(1);
        return found.get(0);
    }
}
