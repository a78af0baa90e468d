package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.LauncherProcess;
import io.tenantgateway.agent.testing.LauncherProcess.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launchers {@code bin/tenant-gateway} and {@code bin/proxy-agent} in the image's file layout, started the ways
 * the image and users start them: through the symlinks {@code /proxy-agent} and
 * {@code /usr/local/bin/tenant-gateway} (absolute, relative, a chain of two), with {@code sh} (dash here), by their
 * exec bit and by a PATH lookup, from another working directory.
 */
@Timeout(300)
class LauncherLayoutIT {
    private static final String OPT = "opt/tenant-gateway";

    @TempDir
    Path root;

    @TempDir
    Path elsewhere;

    private String version;

    @BeforeEach
    void version() throws Exception {
        JarProcess.Result result = JarProcess.run("--version");
        assertThat(result.exitCode()).as("java -jar --version; stderr:%n%s", result.err()).isZero();
        version = result.out().lines().findFirst().orElseThrow();
        assertThat(version).startsWith("tenant-gateway ");
    }

    @Test
    void absoluteLinksWorkWithShDirectlyAndThroughPath() throws Exception {
        layout(true);
        link("proxy-agent", root.resolve(OPT + "/bin/proxy-agent"));
        link("usr/local/bin/tenant-gateway", root.resolve(OPT + "/bin/tenant-gateway"));

        assertHelp(run(List.of(shell(), root.resolve("proxy-agent").toString(), "--help")));
        assertVersion(run(List.of(shell(), root.resolve("usr/local/bin/tenant-gateway").toString(), "--version")));
        assertHelp(run(List.of(root.resolve("proxy-agent").toString(), "--help")));
        assertVersion(run(List.of(root.resolve("usr/local/bin/tenant-gateway").toString(), "--version")));
        assertVersion(run(List.of(shell(), "-c", "tenant-gateway --version")));
    }

    @Test
    void relativeLinksAndAChainOfTwoWork() throws Exception {
        layout(true);
        link("proxy-agent", Path.of(OPT + "/bin/proxy-agent"));
        link("usr/local/bin/tenant-gateway", Path.of("../../../" + OPT + "/bin/tenant-gateway"));
        // usr/bin/tg -> ../local/bin/tenant-gateway -> ../../../opt/tenant-gateway/bin/tenant-gateway
        link("usr/bin/tg", Path.of("../local/bin/tenant-gateway"));

        assertHelp(run(List.of(shell(), root.resolve("proxy-agent").toString(), "--help")));
        assertVersion(run(List.of(root.resolve("usr/local/bin/tenant-gateway").toString(), "--version")));
        assertVersion(run(List.of(shell(), root.resolve("usr/bin/tg").toString(), "--version")));
        assertVersion(run(List.of(shell(), "-c", "tg --version")));
        // The link's own directory as the working directory: `sh NAME` without a slash.
        assertVersion(run(root.resolve("usr/bin"), Map.of(), List.of(shell(), "tg", "--version")));
    }

    @Test
    void tenantGatewayJvmOptsReplacesTheAgentsOptions() throws Exception {
        layout(true);
        link("proxy-agent", root.resolve(OPT + "/bin/proxy-agent"));
        Result result = run(elsewhere, Map.of("TENANT_GATEWAY_JVM_OPTS", "-XX:+UseSerialGC -Xmx96m",
                "JAVA_OPTS", "-XX:+PrintCommandLineFlags"), List.of(shell(), root.resolve("proxy-agent").toString(),
                "--help"));
        assertHelp(result);
        assertThat(result.out()).contains("-XX:MaxHeapSize=100663296").doesNotContain("-XX:TieredStopAtLevel");
    }

    /**
     * The image's class-data archive: made next to the jar by the launcher's {@code cds-archive} (as the Dockerfile
     * does: one real {@code run} through the launcher, then a static dump of the classes it loaded), then used by
     * {@code run} through the links. {@code -Xshare:on} makes an archive the JVM cannot use a start-up error.
     */
    @Test
    void theClassDataArchiveNextToTheJarIsUsed() throws Exception {
        layout(true);
        link("proxy-agent", root.resolve(OPT + "/bin/proxy-agent"));
        Path archive = root.resolve(OPT + "/lib/tenant-gateway.jsa");
        Result training = run(List.of(shell(), root.resolve(OPT + "/bin/tenant-gateway").toString(),
                "cds-archive"));
        assertThat(training.exitCode()).as("%s", training).isZero();
        assertThat(training.err()).contains("cds-training: connected, one tunnel round trip");
        assertThat(archive).isNotEmptyFile();
        assertThat(Files.readAllLines(root.resolve(OPT + "/lib/tenant-gateway.classlist")))
                .as("the run's classes").contains("io/tenantgateway/agent/Agent",
                        "io/tenantgateway/tunnel/client/TunnelClientSet")
                .noneMatch(line -> line.startsWith("io/tenantgateway/tunnel/server/"));

        Result used = run(elsewhere, Map.of("JAVA_OPTS", "-Xshare:on -Xlog:class+load"),
                List.of(shell(), root.resolve("proxy-agent").toString(), "--help"));
        assertHelp(used);
        assertThat(used.out()).as("classes of the agent's jar come from the archive")
                .contains("io.tenantgateway.agent.AgentCommand source: shared objects file");

        // A jar rebuilt after the archive (here: the same bytes, a newer file): the JVM would reject the archive and
        // then map none, not even the JDK's own (with -Xshare:on, not start at all), so the launcher leaves it out.
        Path jar = root.resolve(OPT + "/lib/tenant-gateway.jar");
        Path built = jar.toRealPath();
        Files.delete(jar);
        Files.copy(built, jar);
        Files.setLastModifiedTime(jar, FileTime.from(Files.getLastModifiedTime(archive).toInstant().plusSeconds(60)));
        Result stale = run(elsewhere, Map.of("JAVA_OPTS", "-Xshare:on -Xlog:class+load"),
                List.of(shell(), root.resolve("proxy-agent").toString(), "--help"));
        assertHelp(stale);
        assertThat(stale.out()).as("the agent's classes come from the jar, the JDK's from the JDK's own archive")
                .contains("io.tenantgateway.agent.AgentCommand source: file:")
                .contains("java.lang.Object source: shared objects file");
    }

    @Test
    void aMissingJarExits2ThroughTheLinks() throws Exception {
        layout(false);
        link("proxy-agent", root.resolve(OPT + "/bin/proxy-agent"));
        link("usr/local/bin/tenant-gateway", Path.of("../../../" + OPT + "/bin/tenant-gateway"));

        for (String launcher : new String[] {"proxy-agent", "usr/local/bin/tenant-gateway"}) {
            Result result = run(List.of(shell(), root.resolve(launcher).toString(), "--version"));
            assertThat(result.exitCode()).as("%s exit code; %s", launcher, result).isEqualTo(2);
            assertThat(result.err()).as(launcher).contains("tenant-gateway: jar not found (set TENANT_GATEWAY_JAR");
        }
    }

    @Test
    void labAndBenchSayTheyAreInTheToolsJarWhichTheImageLacks() throws Exception {
        layout(true);
        link("usr/local/bin/tenant-gateway", root.resolve(OPT + "/bin/tenant-gateway"));

        for (String command : new String[] {"lab", "bench"}) {
            Result result = run(List.of(shell(), root.resolve("usr/local/bin/tenant-gateway").toString(), command));
            assertThat(result.exitCode()).as("%s exit code; %s", command, result).isEqualTo(2);
            assertThat(result.err()).as(command).contains("tenant-gateway: " + command + ": tools jar not found:"
                    + " lab and bench are in the tools jar (set TENANT_GATEWAY_TOOLS_JAR or build with:"
                    + " mvn -B package -DskipTests)");
        }
        // The runtime's own help still names them and says where they are.
        Result help = run(List.of(shell(), root.resolve("usr/local/bin/tenant-gateway").toString(), "--help"));
        assertThat(help.exitCode()).as("exit code; %s", help).isZero();
        assertThat(help.out()).contains("lab, bench: in the tools jar");
    }

    /** {@code <root>/opt/tenant-gateway/{bin/{tenant-gateway,proxy-agent},lib/tenant-gateway.jar}}. */
    private void layout(boolean withJar) throws IOException {
        Path bin = JarProcess.jar().toAbsolutePath().getParent().getParent().getParent().resolve("bin");
        Path optBin = Files.createDirectories(root.resolve(OPT + "/bin"));
        for (String script : new String[] {"tenant-gateway", "proxy-agent"}) {
            Path copy = Files.copy(bin.resolve(script), optBin.resolve(script));
            Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Path lib = Files.createDirectories(root.resolve(OPT + "/lib"));
        if (withJar) {
            Files.createSymbolicLink(lib.resolve("tenant-gateway.jar"), JarProcess.jar().toAbsolutePath());
        }
    }

    private void link(String link, Path target) throws IOException {
        Path path = root.resolve(link);
        Files.createDirectories(path.getParent());
        Files.createSymbolicLink(path, target);
    }

    /** dash, as {@code /bin/sh} is on Debian and Ubuntu images, when it is installed. */
    private static String shell() {
        return JarProcess.onPath("dash") ? "dash" : "sh";
    }

    private void assertHelp(Result result) {
        assertThat(result.exitCode()).as("exit code; %s", result).isZero();
        assertThat(result.out()).as("%s", result).contains("--proxy-server-host");
    }

    private void assertVersion(Result result) {
        assertThat(result.exitCode()).as("exit code; %s", result).isZero();
        assertThat(result.out()).as("%s", result).startsWith(version);
    }

    private Result run(List<String> command) throws Exception {
        return run(elsewhere, Map.of(), command);
    }

    /** Runs {@code command} in {@code dir} with {@code <root>/usr/local/bin} and {@code <root>/usr/bin} first on PATH. */
    private Result run(Path dir, Map<String, String> env, List<String> command) throws Exception {
        return LauncherProcess.run(dir, List.of(root.resolve("usr/local/bin"), root.resolve("usr/bin")), env, command);
    }
}
