package io.tenantgateway.agent.ops;

import io.tenantgateway.agent.cli.Durations;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.tunnel.server.FrontendMode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code tenant-gateway probe}: the control-plane side of a tunnel check. Connects to konnectivity-server as
 * kube-apiserver does, dials the target through an agent, optionally does TLS with it and posts a dry-run
 * AdmissionReview; reports each stage with its time and, on failure, why and what to do.
 */
@Command(name = "probe", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Check the path kube-apiserver takes to a webhook (or any service) in a tenant cluster.",
            "konnectivity-server -> agent -> target [-> TLS -> POST /webhook], with timings and explanations."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:every stage asked for passed",
            " 2:bad flags or unreadable files",
            " 3:server: cannot connect to konnectivity-server (--uds/--server)",
            " 4:dial: no tunnel to the target (No agent available, refused, timeout, dial timeout backstop)",
            " 5:tls: TLS with the target failed, or its certificate is wrong (name, CA, expiry)",
            " 6:webhook: the HTTP exchange failed or the answer is not an AdmissionReview",
            " 7:webhook: the webhook refused the pod (allowed: false)"})
public final class ProbeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--uds", paramLabel = "PATH", order = 1,
            description = "konnectivity-server's Unix socket (its --uds-name; Kamaji:"
                    + " /run/konnectivity/konnectivity-server.socket).")
    Path uds;

    @Option(names = "--server", paramLabel = "HOST:PORT", order = 1,
            description = "konnectivity-server's TCP frontend (its --server-port), instead of --uds.")
    String server;

    @Option(names = "--mode", defaultValue = "grpc", order = 1, paramLabel = "grpc|http-connect",
            description = "Frontend protocol: grpc or http-connect (the server's --mode). Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--server-ca", paramLabel = "FILE", order = 1,
            description = "CA of the TCP frontend's certificate (--server-cert of the server).")
    Path serverCa;

    @Option(names = "--client-cert", paramLabel = "FILE", order = 1,
            description = "Client certificate for the TCP frontend (mTLS), as kube-apiserver's egress config uses.")
    Path clientCert;

    @Option(names = "--client-key", paramLabel = "FILE", order = 1, description = "Key of --client-cert.")
    Path clientKey;

    @Option(names = "--plaintext", order = 1,
            description = "TCP frontend without TLS (loopback labs only).")
    boolean plaintext;

    @Option(names = "--target", required = true, paramLabel = "HOST:PORT", order = 2,
            description = "What to dial through the tunnel, e.g. the webhook Service's ClusterIP:443.")
    String target;

    @Option(names = "--tls-server-name", paramLabel = "NAME", order = 2,
            description = "Do TLS with the target and check its certificate against NAME (kube-apiserver uses"
                    + " SERVICE.NAMESPACE.svc).")
    String tlsServerName;

    @Option(names = "--target-ca", paramLabel = "FILE", order = 2,
            description = "CA the target's chain must verify against (the webhook configuration's caBundle).")
    Path targetCa;

    @Option(names = "--webhook", arity = "0..1", fallbackValue = "/webhook", paramLabel = "PATH", order = 2,
            description = "POST a dry-run AdmissionReview to PATH (default /webhook) and show the decision and patch.")
    String webhook;

    @Option(names = "--pod", paramLabel = "FILE", order = 2,
            description = "Pod manifest (YAML/JSON) for the AdmissionReview (default: a pod asking for one"
                    + " nvidia.com/gpu).")
    Path podFile;

    @Option(names = "--timeout", defaultValue = "10s", order = 3, paramLabel = "DURATION",
            description = "Limit of the server, TLS and webhook stages each. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(names = "--dial-timeout", defaultValue = "30s", order = 3, paramLabel = "DURATION",
            description = "Dial backstop, as kube-apiserver's (it sends DIAL_CLS then). Default: ${DEFAULT-VALUE}.")
    String dialTimeout;

    @Option(names = "--json", order = 3, description = "Print the report as JSON.")
    boolean json;

    @Override
    public Integer call() throws InterruptedException {
        // Each of these names its flag in a ConfigException: exit 2 with that one line.
        ProbeConfig config = new ProbeConfig(Optional.ofNullable(uds), Optional.ofNullable(server)
                .map(s -> HostPort.parseRemote("--server", s)), parseMode(mode), plaintext,
                HostPort.parseRemote("--target", target), tlsName(), Optional.ofNullable(webhook),
                Durations.parse("--timeout", timeout), Durations.parse("--dial-timeout", dialTimeout));
        ObjectNode pod = podFile == null ? AdmissionProbe.defaultPod() : AdmissionProbe.readPod(podFile);
        Optional<TrustBundle> targetTrust = Optional.ofNullable(targetCa).map(Pem::readTrustBundle);
        ProbeReport report;
        try (Probe probe = new Probe(config, serverTls(config), targetTrust, pod, Clock.systemUTC())) {
            report = probe.run();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            report.printJson(out);
        } else {
            report.printText(out);
        }
        return report.exitCode();
    }

    private Optional<String> tlsName() {
        if (tlsServerName != null) {
            return Optional.of(tlsServerName);
        }
        if (targetCa != null || webhook != null) {
            throw new ConfigException(webhook != null ? "--webhook" : "--target-ca", "without --tls-server-name",
                    "the name kube-apiserver verifies, e.g. hami-scheduler.kube-system.svc");
        }
        return Optional.empty();
    }

    private Optional<TlsMaterial> serverTls(ProbeConfig config) {
        if (config.unixSocket().isPresent() || config.plaintext()) {
            if (serverCa != null || clientCert != null || clientKey != null) {
                throw new ConfigException("--server-ca/--client-cert/--client-key",
                        "given for " + (config.plaintext() ? "--plaintext" : "--uds"), "only with --server over TLS");
            }
            return Optional.empty();
        }
        if (serverCa == null) {
            throw new ConfigException("--server", server + " without --server-ca",
                    "the CA of the frontend's certificate, or --plaintext for a plain loopback frontend");
        }
        if ((clientCert == null) != (clientKey == null)) {
            throw new ConfigException("--client-cert/--client-key", "only one given", "both, or neither");
        }
        CertBundle identity = clientCert == null ? null : Pem.readBundle(clientCert, clientKey);
        return Optional.of(TlsMaterial.of(identity, Pem.readTrustBundle(serverCa)));
    }

    private static FrontendMode parseMode(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "grpc" -> FrontendMode.GRPC;
            case "http-connect" -> FrontendMode.HTTP_CONNECT;
            default -> throw new ConfigException("--mode", "'" + value + "'", "grpc or http-connect");
        };
    }
}
