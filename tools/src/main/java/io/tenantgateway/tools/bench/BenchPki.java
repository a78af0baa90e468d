package io.tenantgateway.tools.bench;

import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * A throw-away PKI for one bench run: one CA, the konnectivity-server's agent-listener certificate (127.0.0.1),
 * the agent's client certificate (mTLS, as Kamaji's agents use) and the webhook's serving certificate for its
 * Service name. Keys live in memory; {@link #writeAgentFiles} writes what a child agent process needs.
 */
final class BenchPki {
    static final String WEBHOOK_DNS_NAME = "tenant-gateway-webhook.kube-system.svc";

    private final CertificateAuthority ca;
    private final CertBundle server;
    private final CertBundle agent;
    private final CertBundle webhook;

    BenchPki(Clock clock) {
        ca = CertificateAuthority.create("tenant-gateway-bench-ca", KeyAlgorithm.EC_P256, Duration.ofDays(1), clock);
        server = ca.issue(CertificateRequest.server("konnectivity-server").dnsNames("localhost")
                .ipAddresses("127.0.0.1").validity(Duration.ofDays(1)).build());
        agent = ca.issue(CertificateRequest.client("system:konnectivity-agent").validity(Duration.ofDays(1)).build());
        webhook = ca.issue(CertificateRequest.server("tenant-gateway-webhook").dnsNames(WEBHOOK_DNS_NAME)
                .validity(Duration.ofDays(1)).build());
    }

    /** The server's agent listener: its certificate, and the CA that signs agent certificates (mTLS). */
    TlsMaterial serverMaterial() {
        return TlsMaterial.of(server, ca.trustBundle());
    }

    /** The agent: client certificate plus the CA of the server certificate. */
    TlsMaterial agentMaterial() {
        return TlsMaterial.of(agent, ca.trustBundle());
    }

    TlsMaterial webhookMaterial() {
        return TlsMaterial.of(webhook, ca.trustBundle());
    }

    /** The webhook's serving certificate and key, for a child agent's {@code --webhook-tls-cert/-key} files. */
    CertBundle webhookBundle() {
        return webhook;
    }

    /** Trust only: what the webhook's callers need. */
    TlsMaterial trustMaterial() {
        return TlsMaterial.of(null, ca.trustBundle());
    }

    /** Writes {@code ca.crt}, {@code agent.crt} and {@code agent.key} into {@code dir} for a child agent process. */
    AgentFiles writeAgentFiles(Path dir) {
        AgentFiles files = new AgentFiles(dir.resolve("ca.crt"), dir.resolve("agent.crt"), dir.resolve("agent.key"));
        Pem.writeCertificates(ca.trustBundle().certificates(), files.caCert());
        Pem.writeBundle(agent, files.agentCert(), files.agentKey());
        return files;
    }

    record AgentFiles(Path caCert, Path agentCert, Path agentKey) {
    }
}
