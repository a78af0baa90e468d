package io.tenantgateway.agent.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A launcher ({@code bin/tenant-gateway}, {@code bin/proxy-agent}, a link to one, or {@code sh} running one) started
 * as a user starts it: in a working directory of its own, with given directories and then this JVM's {@code bin}
 * first on PATH, and without the launcher's variables ({@code TENANT_GATEWAY_JAR}, ...) unless the caller sets them.
 */
public final class LauncherProcess {
    /** The variables the launcher reads; removed from the child's environment before the caller's are added. */
    private static final List<String> LAUNCHER_VARIABLES = List.of("TENANT_GATEWAY_JAR", "TENANT_GATEWAY_TOOLS_JAR",
            "TENANT_GATEWAY_JVM_OPTS", "JAVA_OPTS", "CDPATH");

    private LauncherProcess() {
    }

    public record Result(List<String> command, int exitCode, String out, String err) {
        @Override
        public String toString() {
            return command + " exited " + exitCode + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    /**
     * Runs {@code command} in {@code dir} with {@code pathFirst}, then this JVM's {@code bin}, then this process's PATH
     * (output through temporary files, deleted after).
     */
    public static Result run(Path dir, List<Path> pathFirst, Map<String, String> env, List<String> command)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(command)).directory(dir.toFile());
        Map<String, String> environment = builder.environment();
        LAUNCHER_VARIABLES.forEach(environment::remove);
        List<String> path = new ArrayList<>();
        pathFirst.forEach(p -> path.add(p.toString()));
        path.add(Path.of(System.getProperty("java.home"), "bin").toString());
        path.add(System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        environment.put("PATH", String.join(File.pathSeparator, path));
        environment.putAll(env);
        Path out = Files.createTempFile("launcher-out", ".txt");
        Path err = Files.createTempFile("launcher-err", ".txt");
        try {
            Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
            return new Result(command, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
