package io.tenantgateway.agent.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenantgateway.certs.testing.TestPki;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ChainCheckTest {
    private static final TestPki PKI = TestPki.create("chain");
    private static final TestPki OTHER = TestPki.create("other");

    @Test
    void goodChainForItsNamePasses() {
        ChainCheck.Result result = ChainCheck.evaluate(PKI.server().chain(), Optional.of(PKI.trust()),
                "hami-scheduler.kube-system.svc", Instant.now());

        assertThat(result.ok()).isTrue();
        assertThat(result.nameMatches()).isTrue();
        assertThat(result.trustChecked()).isTrue();
        assertThat(result.chain().get(0).subject()).isEqualTo("CN=chain-server");
        assertThat(result.chain().get(0).names()).contains("DNS:hami-scheduler.kube-system.svc", "IP:127.0.0.1");
    }

    @Test
    void eachProblemIsNamed() {
        Instant now = Instant.now();
        assertThat(ChainCheck.evaluate(PKI.server().chain(), Optional.of(OTHER.trust()), "localhost", now).findings())
                .extracting(ChainCheck.Finding::problem).containsExactly(ChainCheck.Problem.UNTRUSTED);
        ChainCheck.Result wrongName = ChainCheck.evaluate(PKI.server().chain(), Optional.of(PKI.trust()),
                "webhook.gpu.svc", now);
        assertThat(wrongName.findings()).singleElement().satisfies(f -> {
            assertThat(f.problem()).isEqualTo(ChainCheck.Problem.NAME_MISMATCH);
            assertThat(f.message()).isEqualTo("certificate 'CN=chain-server' does not match the name"
                    + " 'webhook.gpu.svc' (its names: [DNS:localhost, DNS:hami-scheduler.kube-system.svc,"
                    + " DNS:tenant-gateway-webhook.kube-system.svc, IP:127.0.0.1, IP:::1])");
        });
        assertThat(ChainCheck.evaluate(PKI.server().chain(), Optional.empty(), "localhost",
                now.plus(Duration.ofDays(2))).findings()).extracting(ChainCheck.Finding::problem)
                .containsExactly(ChainCheck.Problem.EXPIRED);
        assertThat(ChainCheck.evaluate(List.of(), Optional.empty(), "localhost", now).findings())
                .extracting(ChainCheck.Finding::problem).containsExactly(ChainCheck.Problem.NO_CERTIFICATE);
    }

    @Test
    void expiredChainIsReportedAsExpiredNotAsUntrusted() {
        TestPki old = TestPki.create("old", Clock.fixed(Instant.now().minus(Duration.ofDays(3)), ZoneOffset.UTC));
        ChainCheck.Result result = ChainCheck.evaluate(old.server().chain(), Optional.of(old.trust()), "localhost",
                Instant.now());

        assertThat(result.findings()).extracting(ChainCheck.Finding::problem)
                .containsExactly(ChainCheck.Problem.EXPIRED);
        assertThat(result.first().orElseThrow().message()).startsWith("certificate 'CN=old-server' expired at ");
    }
}
