package io.tenantgateway.agent.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.ops.ListeningLog;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** The built jar running {@code tenant-gateway run …} as a child process, with its log captured line by line. */
public final class AgentProcess implements AutoCloseable {

    public final Process process;
    public final List<String> log = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private AgentProcess(Process process) {
        this.process = process;
        reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    log.add(line);
                }
            } catch (IOException e) {
                log.add("<log reader stopped: " + e + ">");
            }
        }, "agent-log");
        reader.setDaemon(true);
        reader.start();
    }

    public static AgentProcess start(List<String> args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:-UsePerfData");
        command.add("-Xmx256m");
        command.add("-jar");
        command.add(JarProcess.jar().toAbsolutePath().toString());
        command.add("run");
        command.addAll(args);
        return new AgentProcess(new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
    }

    /**
     * Starts {@code bin/tenant-gateway run args…} of this checkout through {@code sh}, as the image does (the launcher
     * picks the JVM options; {@code java} comes first on the PATH from the JVM running the tests).
     */
    public static AgentProcess launch(List<String> args) throws IOException {
        return launch(args, java.util.Map.of());
    }

    /** {@link #launch(List)} with extra environment variables; an empty value removes the variable. */
    public static AgentProcess launch(List<String> args, java.util.Map<String, String> env) throws IOException {
        List<String> command = new ArrayList<>(List.of("sh", launcher().toString(), "run"));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + java.io.File.pathSeparator
                + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        builder.environment().put("TENANT_GATEWAY_JAR", JarProcess.jar().toAbsolutePath().toString());
        env.forEach((name, value) -> {
            if (value.isEmpty()) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        return new AgentProcess(builder.start());
    }

    /** {@code bin/tenant-gateway} of this checkout (the jar is {@code agent/target/tenant-gateway.jar}). */
    public static Path launcher() {
        Path root = JarProcess.jar().toAbsolutePath().getParent().getParent().getParent();
        Path launcher = root.resolve("bin").resolve("tenant-gateway");
        assertThat(launcher).as("the launcher script").exists();
        return launcher;
    }

    /**
     * Sends a signal with kill(1). Not {@link Process#destroy()}: the JDK closes the child's pipes there, so nothing
     * the agent logs while shutting down would be read.
     */
    public void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", name, process.pid()).isZero();
    }

    /** Waits until the log has a line containing {@code text}, failing at once (with the log) if the process ends. */
    public void awaitLine(String text, Duration timeout) {
        await().atMost(timeout).untilAsserted(() -> {
            assertThat(process.isAlive()).as("agent running; log:%n%s", String.join("\n", log)).isTrue();
            assertThat(lines(text)).isNotEmpty();
        });
    }

    /** Waits for the process to exit and for its last log line to be read; returns the exit code. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        assertThat(process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                .as("agent exited within %s; log:%n%s", timeout, String.join("\n", log)).isTrue();
        reader.join(timeout.toMillis());
        return process.exitValue();
    }

    public int healthPort() {
        return port("health", ListeningLog::healthPort);
    }

    public int adminPort() {
        return port("admin", ListeningLog::adminPort);
    }

    private int port(String server, Function<String, OptionalInt> fromLine) {
        int[] found = new int[1];
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(process.isAlive()).as("agent running; log:%n%s", String.join("\n", log)).isTrue();
            OptionalInt port = log.stream().map(fromLine).filter(OptionalInt::isPresent).findFirst()
                    .orElse(OptionalInt.empty());
            assertThat(port).as("the %s server's listening line in the log", server).isPresent();
            found[0] = port.getAsInt();
        });
        return found[0];
    }

    /** The process's resident set ({@code VmRSS} of /proc/PID/status), in KiB. */
    public long rssKiB() throws IOException {
        for (String line : java.nio.file.Files.readAllLines(Path.of("/proc", Long.toString(process.pid()),
                "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for pid " + process.pid() + " (exited?)");
    }

    public List<String> lines(String containing) {
        return log.stream().filter(line -> line.contains(containing)).toList();
    }

    /**
     * Kills the agent and waits until it is gone, so that what a test closes next (a mock API server waiting for its
     * connections to end) never races the dying process.
     */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
