package io.tenantgateway.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.agent.testing.CliRun;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.SubjectNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertsCommandTest {
    @TempDir
    Path dir;

    @Test
    void initWritesCaWebhookAndAgentCertificates() throws Exception {
        CliRun run = CliRun.of("certs", "init", "--out", dir.toString(), "--webhook-dns", "hook.tenant.svc",
                "--server-ip", "10.96.0.20", "--agent-org", "system:nodes");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("webhook.crt, webhook.key", "agent.crt, agent.key");
        X509Certificate webhook = Pem.readBundle(dir.resolve("webhook.crt"), dir.resolve("webhook.key")).leaf();
        assertThat(SubjectNames.of(webhook)).containsExactly("DNS:hook.tenant.svc", "IP:10.96.0.20");
        X509Certificate agent = Pem.readBundle(dir.resolve("agent.crt"), dir.resolve("agent.key")).leaf();
        assertThat(agent.getSubjectX500Principal().getName()).isEqualTo("CN=konnectivity-agent,O=system:nodes");
        assertThat(agent.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
    }

    @Test
    void defaultWebhookNamesCoverHamiAndOurService() throws Exception {
        assertThat(CliRun.of("certs", "init", "--out", dir.toString()).exitCode()).isZero();
        assertThat(SubjectNames.of(Pem.readCertificates(dir.resolve("webhook.crt")).get(0)))
                .containsExactly("DNS:hami-scheduler.kube-system.svc", "DNS:tenant-gateway-webhook.kube-system.svc");
    }

    @Test
    void initRefusesToOverwriteWithoutForce() {
        assertThat(CliRun.of("certs", "init", "--out", dir.toString()).exitCode()).isZero();
        CliRun again = CliRun.of("certs", "init", "--out", dir.toString());
        assertThat(again.exitCode()).isEqualTo(2);
        assertThat(again.err()).contains(dir.resolve("ca.crt") + ": already exists (use --force to overwrite)");
        assertThat(CliRun.of("certs", "init", "--out", dir.toString(), "--force").exitCode()).isZero();
    }

    @Test
    void inspectPrintsSubjectSansValidityAndFingerprint() {
        CliRun.of("certs", "init", "--out", dir.toString());
        CliRun run = CliRun.of("certs", "inspect", dir.resolve("webhook.crt").toString());

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("subject:      CN=hami-scheduler.kube-system.svc",
                "issuer:       CN=tenant-gateway-ca", "SANs:         [DNS:hami-scheduler.kube-system.svc,",
                "usages:       [serverAuth]", "status:       valid until ", "sha256:       ");
        assertThat(run.out()).containsPattern("sha256: +([0-9A-F]{2}:){31}[0-9A-F]{2}");
    }

    @Test
    void inspectReportsRenewalWindow() {
        CliRun.of("certs", "init", "--out", dir.toString(), "--validity", "10d");
        CliRun run = CliRun.of("certs", "inspect", "--renew-before", "30d", dir.resolve("agent.crt").toString());
        assertThat(run.out()).containsPattern("status: +needs renewal before 30d: (9d 23h|10d) left");
    }

    @Test
    void verifyPassesAndFailsWithReason() {
        CliRun.of("certs", "init", "--out", dir.resolve("a").toString());
        CliRun.of("certs", "init", "--out", dir.resolve("b").toString());
        Path caA = dir.resolve("a/ca.crt");

        CliRun ok = CliRun.of("certs", "verify", "--ca", caA.toString(), dir.resolve("a/webhook.crt").toString());
        assertThat(ok.exitCode()).isZero();
        assertThat(ok.out()).contains("OK: ").contains("chains to 'CN=tenant-gateway-ca'");

        CliRun wrongCa = CliRun.of("certs", "verify", "--ca", caA.toString(), dir.resolve("b/agent.crt").toString());
        assertThat(wrongCa.exitCode()).isEqualTo(1);
        assertThat(wrongCa.err()).contains("FAILED: ").contains("is not signed by a trusted CA");

        CliRun wrongName = CliRun.of("certs", "verify", "--ca", caA.toString(), "--name", "other.svc",
                dir.resolve("a/webhook.crt").toString());
        assertThat(wrongName.exitCode()).isEqualTo(1);
        assertThat(wrongName.err()).contains("certificate does not cover 'other.svc'");
    }

    @Test
    void badFilesExitTwoWithOneLineNamingTheFile() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage.pem"), "garbage");
        CliRun run = CliRun.of("certs", "inspect", garbage.toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).isEqualTo("error: " + garbage
                + ": no certificate found (expected: a PEM file with -----BEGIN CERTIFICATE-----)");

        CliRun missing = CliRun.of("certs", "verify", "--ca", dir.resolve("nope.crt").toString(), garbage.toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err().strip()).isEqualTo("error: " + dir.resolve("nope.crt") + ": file not found");
    }

    @Test
    void badFlagValuesExitTwo() {
        CliRun run = CliRun.of("certs", "init", "--out", dir.toString(), "--server-ip", "not-an-ip");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err().strip()).isEqualTo("error: IP address: 'not-an-ip' (expected: an IPv4 or IPv6 literal)");
        CliRun validity = CliRun.of("certs", "init", "--out", dir.toString(), "--validity", "soon");
        assertThat(validity.err().strip()).isEqualTo("error: --validity: 'soon' (expected: a duration such as 30s, 5m,"
                + " 1h, 1m30s, 90d)");
        assertThat(CliRun.of("certs", "init").exitCode()).isEqualTo(2);
    }
}
