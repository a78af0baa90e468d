package io.tenantgateway.agent.cli;

import io.tenantgateway.agent.webhook.WebhookFlags;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.SubjectNames;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.certs.VerificationResult;
import io.tenantgateway.certs.policy.RenewalPolicy;
import io.tenantgateway.common.config.ConfigException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenant-gateway certs}: create, inspect and verify the certificates the agent and webhook use. */
@Command(name = "certs", mixinStandardHelpOptions = true,
        description = "Create, inspect and verify certificates (CA, webhook serving cert, agent client cert).",
        subcommands = {CertsCommand.Init.class, CertsCommand.Inspect.class, CertsCommand.Verify.class,
            CertsCommand.InjectCaBundle.class})
public final class CertsCommand {
    /** Service names the webhook is reached by: HAMi's own service and ours. */
    public static final List<String> DEFAULT_WEBHOOK_DNS =
            List.of("hami-scheduler.kube-system.svc", "tenant-gateway-webhook.kube-system.svc");

    private static final Map<String, String> EKU_NAMES = Map.of(
            "1.3.6.1.5.5.7.3.1", "serverAuth", "1.3.6.1.5.5.7.3.2", "clientAuth");

    /** {@code certs init}: a CA, a webhook serving certificate and an agent client certificate. */
    @Command(name = "init", mixinStandardHelpOptions = true,
            description = "Write ca.crt/key, webhook.crt/key (serverAuth) and agent.crt/key (clientAuth) into a"
                    + " directory.")
    static final class Init implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--out", required = true, paramLabel = "DIR",
                description = "Directory to write the files into (created).")
        Path out;

        @Option(names = "--webhook-dns", paramLabel = "NAME",
                description = "DNS names of the webhook certificate (repeatable). Default: ${DEFAULT-VALUE}.")
        List<String> webhookDns = new ArrayList<>(DEFAULT_WEBHOOK_DNS);

        @Option(names = "--server-ip", paramLabel = "IP",
                description = "IP addresses of the webhook certificate (repeatable), e.g. the Service ClusterIP.")
        List<String> serverIps = new ArrayList<>();

        @Option(names = "--agent-cn", defaultValue = "konnectivity-agent", paramLabel = "NAME",
                description = "Common name of the agent client certificate. Default: ${DEFAULT-VALUE}.")
        String agentCommonName;

        @Option(names = "--agent-org", paramLabel = "O",
                description = "Organization of the agent client certificate (repeatable).")
        List<String> agentOrganizations = new ArrayList<>();

        @Option(names = "--key-algorithm", defaultValue = "ec-p256", paramLabel = "ALGORITHM",
                description = "ec-p256, rsa-2048 or rsa-4096. Default: ${DEFAULT-VALUE}.")
        String keyAlgorithm;

        @Option(names = "--validity", defaultValue = "365d", paramLabel = "DURATION",
                description = "Leaf validity, e.g. 90d, 720h. Default: ${DEFAULT-VALUE}. The CA gets 10 years.")
        String validity;

        @Option(names = "--force", description = "Overwrite existing files.")
        boolean force;

        @Override
        public Integer call() {
            KeyAlgorithm algorithm = KeyAlgorithm.parse(keyAlgorithm);
            Duration leafValidity = Durations.parse("--validity", validity);
            if (leafValidity.isNegative() || leafValidity.isZero()) {
                throw new ConfigException("--validity", "'" + validity + "'", "> 0");
            }
            List<String> names = List.of("ca.crt", "ca.key", "webhook.crt", "webhook.key", "agent.crt", "agent.key");
            if (!force) {
                for (String name : names) {
                    if (Files.exists(out.resolve(name))) {
                        throw ConfigException.of(out.resolve(name).toString(),
                                "already exists (use --force to overwrite)");
                    }
                }
            }
            Clock clock = Clock.systemUTC();
            CertificateAuthority ca = CertificateAuthority.create("tenant-gateway-ca", algorithm,
                    CertificateAuthority.DEFAULT_CA_VALIDITY, clock);
            CertBundle webhook = ca.issue(CertificateRequest.server(webhookDns.isEmpty() ? "tenant-gateway-webhook"
                    : webhookDns.get(0)).dnsNames(webhookDns).ipAddresses(serverIps).validity(leafValidity)
                    .keyAlgorithm(algorithm).build());
            CertBundle agent = ca.issue(CertificateRequest.client(agentCommonName)
                    .organizations(agentOrganizations.toArray(String[]::new)).validity(leafValidity)
                    .keyAlgorithm(algorithm).build());
            Pem.writeBundle(ca.bundle(), out.resolve("ca.crt"), out.resolve("ca.key"));
            Pem.writeBundle(webhook, out.resolve("webhook.crt"), out.resolve("webhook.key"));
            Pem.writeBundle(agent, out.resolve("agent.crt"), out.resolve("agent.key"));
            PrintWriter stdout = spec.commandLine().getOut();
            stdout.println("wrote " + out.toAbsolutePath() + ":");
            stdout.println("  ca.crt, ca.key            CA " + ca.certificate().getSubjectX500Principal().getName());
            stdout.println("  webhook.crt, webhook.key  serverAuth " + SubjectNames.of(webhook.leaf()));
            stdout.println("  agent.crt, agent.key      clientAuth " + agent.leaf().getSubjectX500Principal().getName());
            stdout.flush();
            return ExitCodes.OK;
        }
    }

    /** {@code certs inspect}: what a certificate file says. */
    @Command(name = "inspect", mixinStandardHelpOptions = true,
            description = "Print subject, issuer, SANs, usages, validity and SHA-256 fingerprint of each certificate.")
    static final class Inspect implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "FILE", description = "A PEM certificate file (chains print every certificate).")
        Path file;

        @Option(names = "--renew-before", defaultValue = "30d", paramLabel = "DURATION",
                description = "Report 'needs renewal' when less validity is left. Default: ${DEFAULT-VALUE}.")
        String renewBefore;

        @Override
        public Integer call() {
            Duration before = Durations.parse("--renew-before", renewBefore);
            if (before.isNegative()) {
                throw new ConfigException("--renew-before", "'" + renewBefore + "'", ">= 0");
            }
            RenewalPolicy policy = new RenewalPolicy(before, Clock.systemUTC());
            List<X509Certificate> certificates = Pem.readCertificates(file);
            PrintWriter stdout = spec.commandLine().getOut();
            for (int i = 0; i < certificates.size(); i++) {
                X509Certificate cert = certificates.get(i);
                if (certificates.size() > 1) {
                    stdout.println("certificate " + (i + 1) + " of " + certificates.size());
                }
                stdout.println("  subject:      " + cert.getSubjectX500Principal().getName());
                stdout.println("  issuer:       " + cert.getIssuerX500Principal().getName());
                stdout.println("  serial:       " + cert.getSerialNumber().toString(16));
                stdout.println("  CA:           " + (cert.getBasicConstraints() >= 0 ? "yes" : "no"));
                stdout.println("  SANs:         " + SubjectNames.of(cert));
                stdout.println("  usages:       " + extendedUsages(cert));
                stdout.println("  key:          " + cert.getPublicKey().getAlgorithm());
                stdout.println("  not before:   " + cert.getNotBefore().toInstant());
                stdout.println("  not after:    " + cert.getNotAfter().toInstant());
                stdout.println("  status:       " + policy.evaluate(cert).describe());
                stdout.println("  sha256:       " + fingerprint(cert));
            }
            stdout.flush();
            return ExitCodes.OK;
        }
    }

    /** {@code certs verify}: does a certificate chain to a CA (and cover a name)? */
    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Verify a certificate against a CA bundle; exit 1 with the reason when it does not chain,"
                    + " has expired, or does not cover --name.")
    static final class Verify implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--ca", required = true, paramLabel = "FILE", description = "CA bundle (PEM).")
        Path ca;

        @Option(names = "--name", paramLabel = "NAME",
                description = "Also check that the certificate covers this DNS name or IP.")
        String name;

        @Parameters(paramLabel = "FILE", description = "Certificate (chain) to verify, leaf first.")
        Path file;

        @Override
        public Integer call() {
            TrustBundle trust = Pem.readTrustBundle(ca);
            List<X509Certificate> chain = Pem.readCertificates(file);
            VerificationResult result = trust.verify(chain, Clock.systemUTC().instant());
            if (result.valid() && name != null && !SubjectNames.matches(chain.get(0), name)) {
                result = new VerificationResult(false, "certificate does not cover '" + name + "' (its names: "
                        + SubjectNames.of(chain.get(0)) + ")");
            }
            if (result.valid()) {
                spec.commandLine().getOut().println("OK: " + file + ": " + result.message());
                spec.commandLine().getOut().flush();
                return ExitCodes.OK;
            }
            spec.commandLine().getErr().println("FAILED: " + file + ": " + result.message());
            spec.commandLine().getErr().flush();
            return ExitCodes.FAILED;
        }
    }

    /** {@code certs inject-ca-bundle}: point kube-apiserver's trust for the webhook at a CA. */
    @Command(name = "inject-ca-bundle", mixinStandardHelpOptions = true,
            description = "Write a CA into every webhook of the MutatingWebhookConfiguration (clientConfig.caBundle).")
    static final class InjectCaBundle implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--ca", required = true, paramLabel = "FILE",
                description = "CA that signed the webhook's serving certificate.")
        Path ca;

        @Option(names = "--name", defaultValue = WebhookFlags.DEFAULT_WEBHOOK_CONFIG_NAME, paramLabel = "NAME",
                description = "MutatingWebhookConfiguration name. Default: ${DEFAULT-VALUE}.")
        String name;

        @Option(names = "--kubeconfig", paramLabel = "FILE",
                description = "Kubeconfig. Default: $KUBECONFIG, ~/.kube/config or in-cluster.")
        Path kubeconfig;

        @Override
        public Integer call() {
            TrustBundle trust = Pem.readTrustBundle(ca);
            try (io.fabric8.kubernetes.client.KubernetesClient client =
                    io.tenantgateway.agent.k8s.KubernetesClients.create(kubeconfig)) {
                io.tenantgateway.agent.webhook.CaBundleInjector.Result result =
                        io.tenantgateway.agent.webhook.CaBundleInjector.inject(client, name, trust.pem());
                spec.commandLine().getOut().println(result.patched() == 0
                        ? "MutatingWebhookConfiguration " + name + ": CA bundle already current (" + result.webhooks()
                                + " webhooks)"
                        : "MutatingWebhookConfiguration " + name + ": CA bundle written into " + result.patched()
                                + " of " + result.webhooks() + " webhooks");
                spec.commandLine().getOut().flush();
                return ExitCodes.OK;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                throw ConfigException.of("MutatingWebhookConfiguration " + name, String.valueOf(e.getMessage()), e);
            }
        }
    }

    static List<String> extendedUsages(X509Certificate cert) {
        try {
            List<String> oids = cert.getExtendedKeyUsage();
            return oids == null ? List.of() : oids.stream().map(o -> EKU_NAMES.getOrDefault(o, o)).toList();
        } catch (CertificateParsingException e) {
            throw ConfigException.of("unreadable extendedKeyUsage", String.valueOf(e.getMessage()), e);
        }
    }

    static String fingerprint(X509Certificate cert) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(cert.getEncoded());
            return HexFormat.ofDelimiter(":").withUpperCase().formatHex(digest);
        } catch (NoSuchAlgorithmException | CertificateEncodingException e) {
            throw new IllegalStateException("cannot fingerprint certificate", e);
        }
    }
}
