package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.Cleanup;
import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.LoopbackHttp;
import io.tenantgateway.agent.testing.TunnelTestbed;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image's runtime: a {@code jlink}ed JDK with only the modules in {@code agent/src/main/jlink/modules}. The list
 * still covers what {@code jdeps} finds in the runtime jar, the JDK's jlink makes a runtime from it, and the agent,
 * started through the launcher with that runtime's {@code java} first on the PATH (as in the image), connects,
 * carries a tunnel and answers its health port.
 */
class RuntimeJlinkIT {
    private static final Path MODULES = Path.of(System.getProperty("user.dir"), "src", "main", "jlink", "modules");

    @TempDir
    Path dir;

    static List<String> modules() throws IOException {
        return Files.readAllLines(MODULES).stream().map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
    }

    @Test
    void theAgentRunsOnTheJlinkedRuntime() throws Exception {
        Path jdk = Path.of(System.getProperty("java.home"));
        Path jar = JarProcess.jar().toAbsolutePath();
        // jdeps and jlink each take several seconds; they do not depend on each other.
        CompletableFuture<String> jdeps = CompletableFuture.supplyAsync(() -> run(List.of(
                jdk.resolve("bin/jdeps").toString(), "--ignore-missing-deps", "--print-module-deps",
                "--multi-release", Integer.toString(Runtime.version().feature()), jar.toString())));
        Path runtime = dir.resolve("runtime");
        run(List.of(jdk.resolve("bin/jlink").toString(), "--add-modules", String.join(",", modules()),
                "--strip-debug", "--no-man-pages", "--no-header-files", "--generate-cds-archive",
                "--output", runtime.toString()));

        Set<String> found = new TreeSet<>(Arrays.asList(jdeps.get(5, TimeUnit.MINUTES).strip().split(",")));
        assertThat(modules()).as("%s covers what jdeps finds in %s", MODULES, jar).containsAll(found);
        String listed = run(List.of(runtime.resolve("bin/java").toString(), "--list-modules"));
        assertThat(listed).as("the jlinked runtime's modules").contains("jdk.crypto.ec").doesNotContain("java.se@",
                "jdk.compiler", "jdk.jshell");

        Files.createDirectories(dir.resolve("testbed"));
        TunnelTestbed testbed = new TunnelTestbed(dir.resolve("testbed"));
        List<String> args = new ArrayList<>(testbed.kamajiArgs());
        args.add("--dial-allow=127.0.0.1");
        AgentProcess agent = AgentProcess.launch(args, Map.of("PATH",
                runtime.resolve("bin") + File.pathSeparator + System.getenv().getOrDefault("PATH", "/usr/bin")));
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> testbed.server.agentCount() == 1);
            try (TunnelTestbed.Tunnel tunnel = testbed.dialEcho()) {
                assertThat(tunnel.echo("through the jlinked runtime")).isEqualTo("through the jlinked runtime");
            }
            assertThat(LoopbackHttp.get(agent.healthPort(), "/readyz").statusCode()).isEqualTo(200);
            long java = ProcessHandle.of(agent.process.pid()).flatMap(h -> h.info().command())
                    .map(command -> command.startsWith(runtime.toString()) ? 1L : 0L).orElse(0L);
            assertThat(java).as("the agent's java is the jlinked one").isEqualTo(1L);
        } finally {
            Cleanup.closeInOrder(agent, testbed);
        }
    }

    private static String run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("%s finished", command).isTrue();
            assertThat(process.exitValue()).as("%s exit; output:%n%s", command, out).isZero();
            return out;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
