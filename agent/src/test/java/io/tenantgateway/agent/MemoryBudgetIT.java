package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.AgentProcess;
import io.tenantgateway.agent.testing.JarProcess;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The agent's memory budget as {@code bin/tenant-gateway run} applies it (agent/REFERENCE.md, "Memory budget"): fixed
 * bounds with no container limit, whatever the machine's RAM (a larger heap when the webhook is on: its request
 * bodies in flight); a container memory limit (cgroup v2 or v1, read from
 * {@code TENANT_GATEWAY_CGROUP_ROOT} here instead of {@code /sys/fs/cgroup}) only lowers them; and running out of a
 * bound exits the process (status 3) instead of leaving a wedged JVM.
 */
class MemoryBudgetIT {
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} -> heap {3} MiB, direct {4} MiB, young generation {5} MiB")
    @CsvSource({
        "no cgroup files, '', '', 48, 32, 2",
        "cgroup v2 without a limit, v2:max, '', 48, 32, 2",
        "cgroup v1 without a limit, v1:9223372036854771712, '', 48, 32, 2",
        "cgroup v2 limit 1 GiB (above the budget), v2:1073741824, '', 48, 32, 2",
        "cgroup v2 limit 128 MiB, v2:134217728, '', 32, 16, 2",
        "cgroup v1 limit 160 MiB, v1:167772160, '', 40, 20, 2",
        "cgroup v2 limit 32 MiB (floors), v2:33554432, '', 16, 8, 2",
        "webhook on (--webhook-tls-cert), '', --webhook-tls-cert=/tls.crt, 64, 48, 8",
        "webhook on (--webhook-tls-secret NAME), '', --webhook-tls-secret kube-system/tls, 64, 48, 8",
        "webhook on (--enable-webhook), '', --enable-webhook, 64, 48, 8",
        "webhook off (--enable-webhook=false), '', --webhook-tls-cert=/tls.crt --enable-webhook=false, 48, 32, 2",
        "webhook on (config file key), '', --config=CONFIG, 64, 48, 8",
        "webhook on; manifests' limit 320 MiB, v2:335544320, --webhook-tls-cert=/tls.crt, 64, 40, 8",
        "webhook on; cgroup v2 limit 128 MiB, v2:134217728, --webhook-tls-cert=/tls.crt, 32, 16, 8",
        "webhook on; cgroup v2 limit 64 MiB (a quarter of the heap), v2:67108864, --webhook-tls-cert=/tls.crt, 16, 8, 4"})
    void boundsAreFixedAndAContainerLimitOnlyLowersThem(String name, String cgroup, String flags, long heapMib,
            long directMib, long youngMib) throws Exception {
        Path root = Files.createDirectories(dir.resolve("cgroup"));
        if (cgroup.startsWith("v2:")) {
            Files.writeString(root.resolve("memory.max"), cgroup.substring(3) + "\n");
        } else if (cgroup.startsWith("v1:")) {
            Files.writeString(Files.createDirectories(root.resolve("memory")).resolve("memory.limit_in_bytes"),
                    cgroup.substring(3) + "\n");
        }
        Path config = Files.writeString(dir.resolve("config.yaml"), "webhook-tls-cert: /tls.crt\n");
        List<String> args = new java.util.ArrayList<>(List.of("run"));
        if (!flags.isEmpty()) {
            for (String flag : flags.split(" ")) {
                args.add(flag.replace("CONFIG", config.toString()));
            }
        }
        args.add("--help");
        Result result = launch(Map.of("TENANT_GATEWAY_CGROUP_ROOT", root.toString(),
                "JAVA_OPTS", "-XX:+PrintFlagsFinal"), args.toArray(String[]::new));
        String output = result.output();
        assertThat(result.status()).as(output).isZero();
        assertThat(flag(output, "MaxHeapSize")).isEqualTo(heapMib * MIB);
        assertThat(flag(output, "MaxDirectMemorySize")).isEqualTo(directMib * MIB);
        assertThat(flag(output, "InitialHeapSize")).isEqualTo(8 * MIB);
        assertThat(flag(output, "MaxNewSize")).as("a small young generation: its pages stay resident").isEqualTo(
                youngMib * MIB);
        assertThat(flag(output, "ActiveProcessorCount")).as("threads do not scale with the node's cores")
                .isEqualTo(2);
        assertThat(flag(output, "TieredStopAtLevel")).isEqualTo(1);
        assertThat(flag(output, "Tier3InvocationThreshold")).as("start-up code stays interpreted").isEqualTo(600);
        assertThat(flag(output, "ExitOnOutOfMemoryError")).isEqualTo(1);
        Runtime.Version java = Runtime.version();
        if (java.feature() > 21 || java.feature() == 21 && java.update() >= 1
                || java.feature() == 17 && java.update() >= 9) {
            // glibc keeps what the JVM freed unless told to hand it back (the launcher reads the JDK's release file).
            assertThat(flag(output, "TrimNativeHeapInterval")).isEqualTo(1000);
        }
    }

    @Test
    void runningOutOfABoundExitsTheProcess() throws Exception {
        // Metaspace is the bound start-up reaches first; without the class-data archive every class counts.
        Result oom = launch(Map.of("JAVA_OPTS", "-Xshare:off -XX:MaxMetaspaceSize=4m"), "run", "--help");
        assertThat(oom.status()).as(oom.output()).isEqualTo(3);
        assertThat(oom.output()).contains("Terminating due to java.lang.OutOfMemoryError");
    }

    private record Result(int status, String output) {
    }

    private static long flag(String printFlagsFinal, String name) {
        return printFlagsFinal.lines().map(String::strip).filter(line -> line.matches("\\S+\\s+" + name + "\\s+:?=.*"))
                .map(line -> line.split("\\s+")[3]).map(value -> value.equals("true") ? "1"
                        : value.equals("false") ? "0" : value)
                .mapToLong(Long::parseLong).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in -XX:+PrintFlagsFinal output"));
    }

    private static Result launch(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("sh", AgentProcess.launcher().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + File.pathSeparator
                + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        builder.environment().put("TENANT_GATEWAY_JAR", JarProcess.jar().toAbsolutePath().toString());
        builder.environment().remove("TENANT_GATEWAY_JVM_OPTS");
        builder.environment().putIfAbsent("TENANT_GATEWAY_CGROUP_ROOT", "/nonexistent");
        builder.environment().putAll(env);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
