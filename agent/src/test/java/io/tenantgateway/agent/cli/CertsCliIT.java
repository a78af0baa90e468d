package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.tenantgateway.agent.testing.JarProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The built jar, run as a user runs it: README's certs flow and the bad-input contract (exit 2, one line). */
@Timeout(180)
class CertsCliIT {
    @TempDir
    Path dir;

    @Test
    void versionAndReadmeCertsFlow() throws Exception {
        JarProcess.Result version = JarProcess.run("--version");
        assertThat(version.exitCode()).isZero();
        assertThat(version.out()).startsWith("tenant-gateway 0.");

        JarProcess.Result init = JarProcess.run("certs", "init", "--out", dir.toString());
        assertThat(init.exitCode()).as(init.err()).isZero();
        JarProcess.Result inspect = JarProcess.run("certs", "inspect", dir.resolve("webhook.crt").toString());
        assertThat(inspect.exitCode()).isZero();
        assertThat(inspect.out()).contains("SANs:         [DNS:hami-scheduler.kube-system.svc");
    }

    @Test
    void garbageFileIsOneLineWithoutStackTrace() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage.crt"), "\u0000\u0001 not pem");
        JarProcess.Result result = JarProcess.run("certs", "inspect", garbage.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err().lines().toList()).hasSize(1);
        assertThat(result.err()).startsWith("error: " + garbage + ": ").doesNotContain("Exception", "\tat ");
    }

    @Test
    void unreadableFileAsAnOrdinaryUser() throws Exception {
        assumeThat(JarProcess.onPath("setpriv")).as("setpriv available").isTrue();
        // A world-traversable directory with a certificate nobody else may read; the JVM runs as 'nobody'.
        Path shared = Files.createDirectories(Path.of("target", "unreadable-" + System.nanoTime()).toAbsolutePath());
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        JarProcess.Result init = JarProcess.run("certs", "init", "--out", shared.toString());
        assertThat(init.exitCode()).isZero();
        Path locked = shared.resolve("ca.crt");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rw-------"));

        JarProcess.Result result = JarProcess.run(
                List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                List.of("-Duser.home=/tmp", "-Djava.io.tmpdir=/tmp"), "certs", "inspect", locked.toString());
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err().strip())
                .isEqualTo("error: " + locked + ": permission denied (the agent cannot read this file)");
    }
}
