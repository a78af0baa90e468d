package io.tenantgateway.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.JarProcess;
import io.tenantgateway.agent.testing.LauncherProcess;
import io.tenantgateway.agent.testing.LauncherProcess.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI release archive {@code agent/target/tenant-gateway-VERSION.tar.gz} ({@code mvn package}; agent/pom.xml's
 * cli-archive) as a workstation uses it: unpacked with {@code tar} outside the checkout, its launcher started by its
 * exec bit from another directory, with the test JVM's {@code java} first on PATH and none of the launcher's
 * variables ({@code TENANT_GATEWAY_JAR}, ...), so the jar it runs can only be the archive's.
 */
@Timeout(300)
class CliArchiveIT {
    @TempDir
    Path unpacked;

    @TempDir
    Path elsewhere;

    private Path home;

    @BeforeEach
    void unpack() throws Exception {
        String property = System.getProperty("tenantgateway.cliArchive");
        assertThat(property).as("system property tenantgateway.cliArchive (set by failsafe; run *IT with mvn verify)")
                .isNotNull();
        Path archive = Path.of(property);
        assertThat(archive).as("the CLI archive (mvn package)").isRegularFile();
        Result tar = run(elsewhere, List.of("tar", "-xzf", archive.toAbsolutePath().toString(), "-C",
                unpacked.toString()));
        assertThat(tar.exitCode()).as("%s", tar).isZero();
        String name = archive.getFileName().toString();
        home = unpacked.resolve(name.substring(0, name.length() - ".tar.gz".length()));
    }

    @Test
    void theArchiveHoldsTheLauncherAndTheJarInTheLayoutTheLauncherSearches() throws IOException {
        List<String> entries;
        try (Stream<Path> files = Files.walk(unpacked)) {
            entries = files.filter(Files::isRegularFile).map(f -> unpacked.relativize(f).toString()).sorted().toList();
        }
        String base = unpacked.relativize(home).toString();
        assertThat(entries).containsExactly(base + "/bin/tenant-gateway", base + "/lib/tenant-gateway.jar");
        assertThat(home.resolve("bin/tenant-gateway")).isExecutable()
                .hasSameTextualContentAs(JarProcess.jar().toAbsolutePath().getParent().getParent().getParent()
                        .resolve("bin/tenant-gateway"));
        assertThat(home.resolve("lib/tenant-gateway.jar")).hasSameBinaryContentAs(JarProcess.jar());
    }

    @Test
    void itsLauncherRunsDoctorAndAnnotationsHelpWithTheArchivesJar() throws Exception {
        String launcher = home.resolve("bin/tenant-gateway").toString();
        Result doctor = run(elsewhere, List.of(launcher, "doctor", "--help"));
        assertThat(doctor.exitCode()).as("%s", doctor).isZero();
        assertThat(doctor.out()).as("%s", doctor).startsWith("Usage: tenant-gateway doctor ")
                .contains("--check-timeout", "Exit codes:");
        Result annotations = run(elsewhere, List.of(launcher, "annotations", "--help"));
        assertThat(annotations.exitCode()).as("%s", annotations).isZero();
        assertThat(annotations.out()).as("%s", annotations).startsWith("Usage: tenant-gateway annotations ")
                .contains("decode", "encode");

        Result version = run(elsewhere, List.of(launcher, "--version"));
        assertThat(version.exitCode()).as("%s", version).isZero();
        assertThat(version.out()).startsWith(JarProcess.run("--version").out().lines().findFirst().orElseThrow());
    }

    /** Without its lib/ the launcher finds no other jar: the help above came from the archive's. */
    @Test
    void withoutTheArchivesJarTheLauncherSaysSoAndExits2() throws Exception {
        Files.delete(home.resolve("lib/tenant-gateway.jar"));
        Result result = run(elsewhere, List.of(home.resolve("bin/tenant-gateway").toString(), "doctor", "--help"));
        assertThat(result.exitCode()).as("%s", result).isEqualTo(2);
        assertThat(result.err()).contains("tenant-gateway: jar not found (set TENANT_GATEWAY_JAR");
    }

    private static Result run(Path dir, List<String> command) throws Exception {
        return LauncherProcess.run(dir, List.of(), Map.of(), command);
    }
}
