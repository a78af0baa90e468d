package io.tenantgateway.agent.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs the built {@code tenant-gateway.jar} in a child JVM, as a user would. */
public final class JarProcess {
    private JarProcess() {
    }

    /** The jar failsafe points at (system property {@code tenantgateway.jar}). */
    public static Path jar() {
        String property = System.getProperty("tenantgateway.jar");
        assertThat(property).as("system property tenantgateway.jar (set by failsafe; run *IT with mvn verify)")
                .isNotNull();
        Path jar = Path.of(property);
        assertThat(jar).as("the shaded jar").exists();
        return jar;
    }

    public record Result(int exitCode, String out, String err) {
    }

    /** Runs {@code java [jvmArgs] -jar tenant-gateway.jar args…} with an optional command prefix (e.g. setpriv). */
    public static Result run(List<String> prefix, List<String> jvmArgs, String... args)
            throws IOException, InterruptedException {
        return finish(new ProcessBuilder(command(prefix, jvmArgs, args)));
    }

    public static Result run(String... args) throws IOException, InterruptedException {
        return run(List.of(), List.of(), args);
    }

    /** Runs {@code java -jar tenant-gateway.jar args…} with the file {@code stdin} on its standard input. */
    public static Result run(Path stdin, String... args) throws IOException, InterruptedException {
        return finish(new ProcessBuilder(command(List.of(), List.of(), args)).redirectInput(stdin.toFile()));
    }

    private static List<String> command(List<String> prefix, List<String> jvmArgs, String... args) {
        List<String> command = new ArrayList<>(prefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:-UsePerfData");
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add(jar().toAbsolutePath().toString());
        command.addAll(List.of(args));
        return command;
    }

    /** Starts {@code builder}'s process and waits up to two minutes for it, collecting what it printed. */
    public static Result finish(ProcessBuilder builder) throws IOException, InterruptedException {
        Process process = builder.start();
        CompletableFuture<String> out = read(process.getInputStream());
        CompletableFuture<String> err = read(process.getErrorStream());
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s finished", builder.command()).isTrue();
        return new Result(process.exitValue(), out.join(), err.join());
    }

    private static CompletableFuture<String> read(java.io.InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "<unreadable: " + e + ">";
            }
        });
    }

    public static boolean onPath(String binary) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, binary))) {
                return true;
            }
        }
        return false;
    }
}
