package io.tenantgateway.agent.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.hami.HamiRelease;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The webhook's flags on their own, as {@code run} and {@code tenant-gateway webhook} both use them. */
class WebhookFlagsTest {
    @TempDir
    Path dir;

    private static WebhookFlags parse(String... args) {
        WebhookFlags flags = new WebhookFlags();
        new CommandLine(flags).parseArgs(args);
        return flags;
    }

    private static Optional<WebhookSettings> part(WebhookFlags flags) {
        return flags.settings();
    }

    @Test
    void selfManagedDefaultsAreWebhookCertificatesConfigs() {
        WebhookCertificatesConfig defaults = part(parse("--webhook-tls-secret=kube-system/tls",
                "--webhook-tls-self-managed")).orElseThrow().certificates().orElseThrow();
        assertThat(defaults).isEqualTo(WebhookCertificatesConfig.parse("kube-system/tls",
                WebhookCertificatesConfig.DEFAULT_SERVICE, WebhookCertificatesConfig.DEFAULT_VALIDITY,
                WebhookCertificatesConfig.DEFAULT_RENEW_BEFORE, WebhookCertificatesConfig.DEFAULT_CA_VALIDITY,
                WebhookCertificatesConfig.DEFAULT_CA_OVERLAP));
    }

    @Test
    void ascendAndIluvatarAreOffByDefaultAndTheBareFlagMeansTrue() {
        io.tenantgateway.webhook.policy.PolicyConfig defaults = part(parse("--webhook-tls-secret=kube-system/tls"))
                .orElseThrow().config().policy();
        assertThat(defaults.enableAscend()).as("off, as in HAMi's chart").isFalse();
        assertThat(defaults.enableIluvatar()).isFalse();

        io.tenantgateway.webhook.policy.PolicyConfig bare = part(parse("--webhook-tls-secret=kube-system/tls",
                "--enable-ascend", "--enable-iluvatar")).orElseThrow().config().policy();
        assertThat(bare.enableAscend()).isTrue();
        assertThat(bare.enableIluvatar()).isTrue();

        io.tenantgateway.webhook.policy.PolicyConfig explicit = part(parse("--webhook-tls-secret=kube-system/tls",
                "--enable-ascend=true", "--enable-iluvatar=false", "--hami-compat=v2.9")).orElseThrow().config()
                .policy();
        assertThat(explicit.enableAscend()).isTrue();
        assertThat(explicit.enableIluvatar()).isFalse();
        assertThat(explicit.compat()).isEqualTo(HamiRelease.V2_9);
    }

    @Test
    void onWithACertificateSourceOffOtherwise() throws Exception {
        assertThat(part(parse())).isEmpty();
        assertThat(parse("--webhook-tls-secret=kube-system/tls").enabled()).isTrue();
        assertThat(parse("--webhook-tls-secret=kube-system/tls", "--enable-webhook=false").enabled()).isFalse();
        assertThatThrownBy(() -> part(parse("--enable-webhook"))).isInstanceOf(ConfigException.class)
                .hasMessage("--enable-webhook: no serving certificate (expected: --webhook-tls-cert and"
                        + " --webhook-tls-key, or --webhook-tls-secret)");

        Path cert = Files.writeString(dir.resolve("tls.crt"), "x");
        Path key = Files.writeString(dir.resolve("tls.key"), "x");
        WebhookSettings files = part(parse("--webhook-tls-cert=" + cert, "--webhook-tls-key=" + key,
                "--webhook-listen=:8443", "--device-config-map=")).orElseThrow();
        assertThat(files.config().host()).isEqualTo("0.0.0.0");
        assertThat(files.config().port()).isEqualTo(8443);
        assertThat(files.deviceConfigMap()).isEmpty();
        assertThat(files.tlsCert()).contains(cert);
    }

    @Test
    void theUpstreamNeedsItsCaAndTheCaNeedsTheUpstream() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.crt"), "x");
        assertThatThrownBy(() -> part(parse("--webhook-tls-secret=kube-system/tls", "--upstream=https://hami/webhook")))
                .isInstanceOf(ConfigException.class).hasMessage("--upstream-ca: missing (expected: the CA file that"
                        + " signs the certificate of https://hami/webhook)");
        assertThatThrownBy(() -> part(parse("--webhook-tls-secret=kube-system/tls", "--upstream-ca=" + ca)))
                .isInstanceOf(ConfigException.class)
                .hasMessage("--upstream-ca: given without --upstream (expected: both or neither)");
        assertThat(part(parse("--webhook-tls-secret=kube-system/tls", "--upstream=https://hami/webhook",
                "--upstream-ca=" + ca, "--upstream-timeout=5s")).orElseThrow().config().upstream())
                .hasValueSatisfying(u -> assertThat(u.timeout()).isEqualTo(Duration.ofSeconds(5)));
    }

    @Test
    void theStandaloneNamesFillTheFlagsAndNameThemInMessages() {
        WebhookFlags flags = parse("--webhook-listen=127.0.0.1:1");
        flags.use(new WebhookFlags.StandaloneNames("nine", 3, null, null, null, true));
        assertThatThrownBy(() -> flags.serving("/webhook")).hasMessage("--tls-cert: missing (expected: --tls-cert and --tls-key,"
                        + " or --webhook-tls-secret)");
        WebhookFlags secret = parse("--webhook-tls-secret=kube-system/tls");
        secret.use(new WebhookFlags.StandaloneNames("nine", null, null, null, null, false));
        assertThatThrownBy(() -> secret.serving("/webhook")).isInstanceOf(ConfigException.class)
                .hasMessage("--listen: nine (expected: HOST:PORT, [IPv6]:PORT, :PORT or PORT, e.g. 0.0.0.0:9443)");
    }
}
