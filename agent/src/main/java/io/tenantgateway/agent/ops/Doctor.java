package io.tenantgateway.agent.ops;

import io.fabric8.kubernetes.api.model.Node;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
import java.util.Map;
import io.tenantgateway.agent.Parts;
import io.tenantgateway.agent.part.Part;
import io.tenantgateway.common.net.HostPort;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import io.tenantgateway.agent.webhook.ManagedWebhookConfiguration;
import io.tenantgateway.agent.webhook.WebhookSettings;
import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.util.NetUtil;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.webhook.DeviceConfigWatch;
import io.tenantgateway.agent.webhook.HamiWebhookCoexistence;
import io.tenantgateway.hami.HamiWebhookConfiguration;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.agent.devices.DeviceDiscoveryException;
import io.tenantgateway.agent.devices.DeviceRegistrar;
import io.tenantgateway.agent.devices.SimulatedVendor;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.node.OwnNode;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Permission;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.SocketProbe;
import io.tenantgateway.deviceplugin.UnixSockets;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.SubjectNames;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.hami.GpuDevice;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.transport.Transports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The node-side checklist: everything the agent needs before it can serve, checked in the order the agent uses it —
 * files, DNS, TCP, TLS, the Connect handshake, the Kubernetes API, the device source. A check whose input failed is
 * skipped, so the first failure is the one to fix. Runs on the calling (CLI) thread; network steps have a timeout
 * each; DNS runs on its own thread because the JDK resolver cannot be interrupted.
 */
final class Doctor implements AutoCloseable {
    private final AgentConfig config;
    private final Clock clock;
    private final Duration timeout;
    private final EventLoopGroup group = Transports.newGroup(1, "doctor");
    private final ExecutorService dns = Executors.newSingleThreadExecutor(DaemonThreads.named("doctor-dns"));
    private final List<DoctorCheck> checks = new ArrayList<>();

    // What earlier checks produced for later ones.
    private TrustBundle trust;
    private CertBundle agentIdentity;
    private boolean agentIdentityFailed;
    private String token;
    private boolean tokenFailed;
    private List<InetAddress> addresses = List.of();
    private Channel connection;
    private boolean tlsOk;
    private boolean apiOk;

    Doctor(AgentConfig config, Clock clock, Duration timeout) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
        this.timeout = requireNonNull(timeout, "timeout");
    }

    List<DoctorCheck> run() throws InterruptedException {
        checks.add(DoctorCheck.pass("config", "flags valid; parts: " + parts()));
        checks.add(caCert());
        checks.add(agentCert());
        checks.add(token());
        checks.add(webhookCert());
        checks.add(dns());
        checks.add(tcp());
        checks.add(tls());
        checks.add(connect());
        checks.add(kubernetes());
        checks.add(hamiWebhook());
        checks.add(deviceConfigMap());
        checks.add(devices());
        checks.add(registrations());
        if (config.devicePlugin().isPresent()) {
            checks.add(devicePlugin()); // only where it is on: a skipped line on every other node says nothing
        }
        return List.copyOf(checks);
    }

    private String parts() {
        return Stream.concat(Stream.of("tunnel"), Parts.enabled(config).stream().map(part -> part.plan().name()))
                .collect(Collectors.joining(", "));
    }

    private TunnelConfig tunnel() {
        return config.tunnel();
    }

    private String server() {
        return new HostPort(tunnel().proxyServerHost(), tunnel().proxyServerPort()).toString();
    }

    // ---- files ----

    private DoctorCheck caCert() {
        Path file = tunnel().caCert();
        if (file == null) {
            return DoctorCheck.fail("ca-cert", "no --ca-cert: the agent cannot verify the server",
                    "pass --ca-cert with the CA of the server's certificate (Kamaji: the tenant CA,"
                            + " /var/run/secrets/kubernetes.io/serviceaccount/ca.crt)");
        }
        try {
            trust = Pem.readTrustBundle(file);
        } catch (RuntimeException e) {
            return DoctorCheck.fail("ca-cert", e.getMessage(), "--ca-cert must be a readable PEM file with the CA"
                    + " certificate(s) that signed the konnectivity-server's certificate");
        }
        Instant now = clock.instant();
        List<String> lines = trust.certificates().stream().map(ca -> ca.getSubjectX500Principal().getName()
                + ", valid until " + ca.getNotAfter().toInstant()).toList();
        Optional<X509Certificate> expired = trust.certificates().stream()
                .filter(ca -> !now.isBefore(ca.getNotAfter().toInstant())).findFirst();
        if (expired.isPresent()) {
            return DoctorCheck.fail("ca-cert", file + ": CA '" + expired.get().getSubjectX500Principal().getName()
                    + "' expired at " + expired.get().getNotAfter().toInstant(), "rotate the tenant CA, or point"
                    + " --ca-cert at the current one").withDetails(lines);
        }
        return DoctorCheck.pass("ca-cert", file + ": " + trust.certificates().size() + " CA certificate(s)")
                .withDetails(lines);
    }

    private DoctorCheck agentCert() {
        if (tunnel().agentCert() == null) {
            return DoctorCheck.skip("agent-cert", "no --agent-cert (the server authenticates the token instead)");
        }
        try {
            agentIdentity = Pem.readBundle(tunnel().agentCert(), tunnel().agentKey());
        } catch (RuntimeException e) {
            agentIdentityFailed = true;
            return DoctorCheck.fail("agent-cert", e.getMessage(), "--agent-cert and --agent-key must be a readable"
                    + " PEM certificate and its unencrypted private key, from the same pair");
        }
        return certificateValidity("agent-cert", tunnel().agentCert(), agentIdentity.leaf(),
                "reissue the agent's client certificate from the CA the server trusts (--cluster-ca-cert)");
    }

    private DoctorCheck certificateValidity(String name, Path file, X509Certificate leaf, String renewFix) {
        Instant now = clock.instant();
        Instant notAfter = leaf.getNotAfter().toInstant();
        String subject = leaf.getSubjectX500Principal().getName();
        List<String> lines = List.of("names: " + SubjectNames.of(leaf), "valid " + leaf.getNotBefore().toInstant()
                + " .. " + notAfter);
        if (!now.isBefore(notAfter)) {
            return DoctorCheck.fail(name, file + ": certificate '" + subject + "' expired at " + notAfter, renewFix)
                    .withDetails(lines);
        }
        if (now.isBefore(leaf.getNotBefore().toInstant())) {
            return DoctorCheck.fail(name, file + ": certificate '" + subject + "' is not valid before "
                    + leaf.getNotBefore().toInstant(), "check this node's clock (NTP)").withDetails(lines);
        }
        // Automation renews long before the last tenth of a certificate's life: reaching it means renewal is stuck.
        Duration lifetime = Duration.between(leaf.getNotBefore().toInstant(), notAfter);
        if (Duration.between(now, notAfter).compareTo(lifetime.dividedBy(10)) < 0) {
            return DoctorCheck.warn(name, file + ": certificate '" + subject + "' expires at " + notAfter
                    + " (in " + human(Duration.between(now, notAfter)) + ")", renewFix).withDetails(lines);
        }
        return DoctorCheck.pass(name, file + ": '" + subject + "', key matches, valid until " + notAfter)
                .withDetails(lines);
    }

    private DoctorCheck token() {
        Path file = tunnel().serviceAccountTokenPath();
        if (file == null) {
            if (tunnel().agentCert() == null) {
                return DoctorCheck.warn("token", "neither --service-account-token-path nor --agent-cert: the agent"
                        + " will not authenticate", "Kamaji's server wants a token: --service-account-token-path"
                        + "=/var/run/secrets/tokens/konnectivity-agent-token (projected, audience"
                        + " system:konnectivity-server)");
            }
            return DoctorCheck.skip("token", "no --service-account-token-path (mTLS with --agent-cert)");
        }
        try {
            token = Files.readString(file).strip();
        } catch (IOException e) {
            tokenFailed = true;
            return DoctorCheck.fail("token", file + ": cannot read: " + e.getMessage(), "mount the projected"
                    + " service-account token at this path (volume serviceAccountToken, audience"
                    + " system:konnectivity-server) and make it readable by the agent's user");
        }
        if (token.isEmpty()) {
            tokenFailed = true;
            return DoctorCheck.fail("token", file + ": empty", "the token file must hold the service-account"
                    + " token; check the projected volume");
        }
        JwtClaims claims;
        try {
            claims = JwtClaims.decode(token);
        } catch (IllegalArgumentException e) {
            return DoctorCheck.warn("token", file + ": " + e.getMessage() + "; audience and expiry unknown",
                    "fine for a static token the server knows; Kubernetes service-account tokens are JWTs");
        }
        Instant now = clock.instant();
        String summary = file + ": JWT aud=" + claims.audiences() + claims.subject().map(s -> " sub=" + s).orElse("")
                + claims.expiresAt().map(exp -> " exp=" + exp).orElse(" (no exp)");
        if (claims.expiredAt(now)) {
            tokenFailed = true;
            return DoctorCheck.fail("token", summary + ": expired " + human(Duration.between(
                    claims.expiresAt().orElseThrow(), now)) + " ago", "the kubelet refreshes projected tokens before"
                    + " they expire: point --service-account-token-path at the projected volume (not a copy),"
                    + " check the volume's expirationSeconds and the kubelet's log on this node");
        }
        if (!claims.hasKonnectivityAudience()) {
            return DoctorCheck.warn("token", summary + ": audience is not " + JwtClaims.KONNECTIVITY_AUDIENCE,
                    "set audience: " + JwtClaims.KONNECTIVITY_AUDIENCE + " in the projected serviceAccountToken"
                            + " volume (Kamaji's server runs with --authentication-audience="
                            + JwtClaims.KONNECTIVITY_AUDIENCE + "; a default-audience token is refused)");
        }
        return DoctorCheck.pass("token", summary + claims.expiresAt().map(exp -> " (in "
                + human(Duration.between(now, exp)) + ")").orElse(""));
    }

    private DoctorCheck webhookCert() {
        Optional<WebhookSettings> webhook = config.webhook();
        if (webhook.isEmpty()) {
            return DoctorCheck.skip("webhook-cert", "webhook off");
        }
        if (webhook.get().tlsCert().isEmpty()) {
            return DoctorCheck.skip("webhook-cert", "serving certificate from Secret "
                    + webhook.get().tlsSecret().orElse("?") + " (read through the API at start)");
        }
        Path cert = webhook.get().tlsCert().get();
        CertBundle bundle;
        try {
            bundle = Pem.readBundle(cert, webhook.get().tlsKey().orElseThrow());
        } catch (RuntimeException e) {
            return DoctorCheck.fail("webhook-cert", e.getMessage(), "--webhook-tls-cert/--webhook-tls-key must be"
                    + " the webhook's PEM certificate and its unencrypted key (tenant-gateway certs init writes both)");
        }
        return certificateValidity("webhook-cert", cert, bundle.leaf(), "renew the webhook certificate (names"
                + " <service>.<namespace>.svc); the agent reloads it without a restart");
    }

    // ---- network ----

    private DoctorCheck dns() throws InterruptedException {
        String host = tunnel().proxyServerHost();
        if (NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host)) {
            try {
                addresses = List.of(InetAddress.getByName(host)); // a literal: no lookup happens
            } catch (IOException e) {
                return DoctorCheck.fail("dns", host + ": " + e.getMessage(), "check --proxy-server-host");
            }
            return DoctorCheck.pass("dns", host + " is an IP address (no lookup)");
        }
        long start = System.nanoTime();
        CompletableFuture<InetAddress[]> lookup = CompletableFuture.supplyAsync(() -> {
            try {
                return InetAddress.getAllByName(host);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, dns);
        try {
            addresses = Arrays.asList(Connections.await(lookup, "DNS lookup of " + host, timeout));
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            String error = e instanceof java.io.UncheckedIOException u ? u.getCause().toString() : e.getMessage();
            return DoctorCheck.fail("dns", "cannot resolve " + host + ": " + error, "check the node's DNS"
                    + " (/etc/resolv.conf; with hostNetwork the node's resolver, without it the cluster's) or set"
                    + " --proxy-server-host to the address the server is exposed on (Kamaji: the TenantControlPlane's"
                    + " advertised address)");
        }
        return DoctorCheck.pass("dns", host + " -> " + addresses.stream().map(InetAddress::getHostAddress)
                .collect(Collectors.joining(", ")) + " in " + millisSince(start) + " ms");
    }

    private DoctorCheck tcp() throws InterruptedException {
        if (addresses.isEmpty()) {
            return DoctorCheck.skip("tcp", "no address (dns failed)");
        }
        List<String> failures = new ArrayList<>();
        for (InetAddress address : addresses) {
            InetSocketAddress target = new InetSocketAddress(address, tunnel().proxyServerPort());
            long start = System.nanoTime();
            try {
                connection = Connections.await(Connections.connect(group, target, timeout), "connect", timeout);
                return DoctorCheck.pass("tcp", "connected to " + address.getHostAddress() + ":"
                        + tunnel().proxyServerPort() + " in " + millisSince(start) + " ms");
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                failures.add(address.getHostAddress() + ":" + tunnel().proxyServerPort() + ": "
                        + Connections.rootMessage(e));
            }
        }
        String error = String.join("; ", failures);
        String fix = error.toLowerCase(java.util.Locale.ROOT).contains("refused")
                ? "nothing accepts connections there: check --proxy-server-port (Kamaji: 8132, the TenantControlPlane"
                        + " Service's konnectivity port), that konnectivity-server runs, and the LoadBalancer/NodePort/"
                        + "Gateway in front of it"
                : "no answer: a firewall or security group between this node and " + server() + " drops the"
                        + " packets, or the address is not routable from the node";
        return DoctorCheck.fail("tcp", "cannot connect to " + error, fix);
    }

    private DoctorCheck tls() throws InterruptedException {
        if (connection == null) {
            return DoctorCheck.skip("tls", "no connection (tcp failed)");
        }
        if (agentIdentityFailed) {
            return DoctorCheck.skip("tls", "agent certificate unreadable (agent-cert failed)");
        }
        long start = System.nanoTime();
        TlsHandshakes.PeerSession session;
        // TLS 1.3 servers refuse a client certificate with an alert after the client's handshake is done: an
        // HTTP/2 exchange right after it brings that alert (or the server's SETTINGS) back.
        Http2Preface preface = new Http2Preface(true);
        String afterHandshake;
        try {
            List<String> alpn = tunnel().alpnProtos().isEmpty() ? List.of("h2") : tunnel().alpnProtos();
            session = Connections.await(TlsHandshakes.handshake(connection,
                    TlsHandshakes.inspectingClient(agentIdentity, alpn), tunnel().proxyServerHost(),
                    tunnel().proxyServerPort(), timeout, preface), "TLS handshake", timeout);
            try {
                Connections.await(preface.result(), "HTTP/2 preface", timeout);
                afterHandshake = null;
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                afterHandshake = Connections.describe(e);
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return DoctorCheck.fail("tls", "handshake with " + server() + " failed: " + Connections.describe(e),
                    "is " + server() + " the konnectivity-server agent port (TLS, 8132 on Kamaji)? A proxy or load"
                            + " balancer terminating TLS in front of it breaks the agent's handshake");
        } finally {
            connection.close();
        }
        ChainCheck.Result chain = ChainCheck.evaluate(session.chain(), Optional.ofNullable(trust),
                tunnel().proxyServerHost(), clock.instant());
        List<String> lines = Probe.chainLines(chain);
        if (chain.ok() && afterHandshake != null) {
            return new DoctorCheck("tls", Outcome.FAIL, "the server ended the connection after the handshake: "
                    + afterHandshake, agentIdentity != null
                            ? "the server refused the client certificate: --agent-cert must be signed by the"
                                    + " server's --cluster-ca-cert"
                            : "the server requires a client certificate (it runs with --cluster-ca-cert): pass"
                                    + " --agent-cert/--agent-key, or use token authentication", lines);
        }
        if (!chain.ok()) {
            ChainCheck.Finding finding = chain.first().orElseThrow();
            String fix = switch (finding.problem()) {
                case UNTRUSTED -> "--ca-cert must hold the CA that signed the server's certificate (on Kamaji the"
                        + " tenant cluster's CA, i.e. the service-account ca.crt of the TENANT cluster, not the"
                        + " management cluster's)";
                case NAME_MISMATCH -> "the agent checks --proxy-server-host against the server certificate: use a"
                        + " name or IP the certificate lists, or add " + tunnel().proxyServerHost() + " to it (Kamaji:"
                        + " spec.networkProfile.certSANs of the TenantControlPlane)";
                case EXPIRED, NOT_YET_VALID -> "renew the server certificate or fix the clocks (NTP)";
                case NO_CERTIFICATE -> "the server presented no certificate: is this a konnectivity-server?";
            };
            return new DoctorCheck("tls", Outcome.FAIL, finding.message(), fix, lines);
        }
        tlsOk = true;
        String trustText = chain.trustChecked() ? "chain verified against --ca-cert" : "chain NOT verified (no CA)";
        if (!chain.trustChecked()) {
            return new DoctorCheck("tls", Outcome.WARN, session.protocol() + ", " + trustText, "fix --ca-cert first",
                    lines);
        }
        return new DoctorCheck("tls", Outcome.PASS, session.protocol() + " ALPN " + session.applicationProtocol()
                + ", " + trustText + ", names include " + tunnel().proxyServerHost() + " (" + millisSince(start)
                + " ms)", "", lines);
    }

    private DoctorCheck connect() throws InterruptedException {
        if (!tlsOk || trust == null) {
            return DoctorCheck.skip("grpc-connect", "no verified TLS connection (an earlier check failed)");
        }
        if (tokenFailed) {
            return DoctorCheck.skip("grpc-connect", "no usable token (token failed)");
        }
        long start = System.nanoTime();
        try {
            ConnectHeaders.Identity identity = Connections.await(ConnectHeaders.read(group,
                    tunnel().proxyServerHost(), tunnel().proxyServerPort(), TlsMaterial.of(agentIdentity, trust),
                    tunnel().alpnProtos(), tunnel().agentId(), token, clock, timeout), "Connect", timeout);
            String text = "/AgentService/Connect accepted: serverid=" + identity.serverId() + " servercount="
                    + identity.serverCount() + " (" + millisSince(start) + " ms)";
            if (identity.serverCount() > 1) {
                return DoctorCheck.pass("grpc-connect", text + "; the agent keeps connecting through "
                        + server() + " until it has one connection to each of the " + identity.serverCount()
                        + " servers");
            }
            return DoctorCheck.pass("grpc-connect", text);
        } catch (InterruptedException e) {
            throw e;
        } catch (ConnectHeaders.ConnectFailedException e) {
            boolean auth = e.status().getCode() == Status.Code.UNAUTHENTICATED
                    || e.status().getCode() == Status.Code.PERMISSION_DENIED;
            String fix = auth ? (token != null
                    ? "the server refused the token: it must be a service-account token of"
                            + " kube-system/konnectivity-agent (the server's --agent-namespace/--agent-service-account)"
                            + " with audience system:konnectivity-server (its --authentication-audience), issued by the"
                            + " TENANT cluster"
                    : "the server refused the client certificate: --agent-cert must be signed by the server's"
                            + " --cluster-ca-cert")
                    : "the TLS connection worked but the Connect call did not: is this a konnectivity-server agent"
                            + " port? Check the server's log for this agent id";
            return DoctorCheck.fail("grpc-connect", e.getMessage(), fix);
        } catch (Exception e) {
            return DoctorCheck.fail("grpc-connect", Connections.describe(e), "check the server's log; the Connect"
                    + " stream must answer with serverid/servercount headers");
        }
    }

    // ---- Kubernetes ----

    private DoctorCheck kubernetes() {
        if (!config.needsKubernetes()) {
            return DoctorCheck.skip("kubernetes", "no enabled part uses the Kubernetes API (pure tunnel)");
        }
        List<Permission> needed = KubernetesAccess.needed(config);
        Config clientConfig;
        try {
            clientConfig = clientConfig();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("kubernetes", "--kubeconfig " + config.servers().kubeconfig() + ": " + e.getMessage(),
                    "pass a readable kubeconfig, or run in the pod (in-cluster service account)");
        }
        List<KubernetesAccess.Answer> answers;
        try (KubernetesClient client = KubernetesClients.create(clientConfig)) {
            answers = KubernetesAccess.review(client, config, needed);
        } catch (KubernetesClientException e) {
            return apiFailure(clientConfig.getMasterUrl(), e);
        }
        apiOk = true;
        List<KubernetesAccess.Answer> denied = answers.stream().filter(a -> !a.allowed()).toList();
        if (denied.isEmpty()) {
            return DoctorCheck.pass("kubernetes", "API " + clientConfig.getMasterUrl() + ": all " + answers.size()
                    + " permissions the enabled parts use are allowed");
        }
        List<String> lines = denied.stream().map(a -> "denied: " + a.permission().key()
                + (a.namespace().isEmpty() ? "" : " in " + a.namespace()) + " (" + a.permission().part() + ": "
                + a.permission().why() + ")" + (a.reason().isEmpty() ? "" : " - " + a.reason())).toList();
        return new DoctorCheck("kubernetes", Outcome.FAIL, denied.size() + " of " + answers.size()
                + " permissions denied", "grant them to the agent's service account: apply the manifests for this"
                + " mode (manifests/base, plus components/device-plugin for pods patch, components/mock-capacity"
                + " for nodes/status patch, components/webhook-tls-secret for the Secret; table in manifests/README.md),"
                + " or add the verbs listed to a ClusterRole bound to it; check with kubectl auth can-i <verb>"
                + " <resource> --as=system:serviceaccount:<ns>:<sa>", lines);
    }

    /**
     * The permission review failed: which of three things happened decides the fix. No answer at all (refused,
     * timed out, TLS): the address or the network. 401 / 403: the credentials or their RBAC. Any other HTTP answer:
     * the API server is there but does not take a SelfSubjectAccessReview (an API server with the
     * authorization API off, a mock, a proxy that allows only some paths) — a warning, and the checks that only need
     * the API go on.
     */
    private DoctorCheck apiFailure(String server, KubernetesClientException e) {
        String said = Optional.ofNullable(e.getStatus()).map(s -> s.getMessage()).filter(m -> m != null
                && !m.isEmpty()).orElse(e.getMessage());
        int code = e.getCode();
        if (code <= 0) {
            return DoctorCheck.fail("kubernetes", "API " + server + ": no answer: " + Connections.describe(e),
                    "check the API server address (" + server + ") and that it is reachable from this node (the"
                            + " in-cluster address is KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT)");
        }
        if (code == 401) {
            return DoctorCheck.fail("kubernetes", "API " + server + ": HTTP 401: " + said, "the API server does not"
                    + " accept these credentials: check the kubeconfig user / the service-account token mount");
        }
        if (code == 403) {
            return DoctorCheck.fail("kubernetes", "API " + server + ": HTTP 403: " + said, "this identity may not"
                    + " even create SelfSubjectAccessReviews (normally allowed to every authenticated user by"
                    + " system:basic-user): bind system:basic-user, or check the agent's RBAC with kubectl auth"
                    + " can-i --as=system:serviceaccount:<ns>:<sa>");
        }
        apiOk = true; // it answered: the checks that read objects go on, and say what they find
        return DoctorCheck.warn("kubernetes", "API " + server + " answered, but not a SelfSubjectAccessReview (HTTP "
                + code + ": " + said + "), so the " + KubernetesAccess.needed(config).size() + " permissions the"
                + " enabled parts use were not checked", "nothing to fix if this API server has no authorization"
                + " API (a test server, a restricting proxy); otherwise check them with kubectl auth can-i <verb>"
                + " <resource> --as=system:serviceaccount:<ns>:<sa> (table in manifests/README.md)");
    }

    private Config clientConfig() throws IOException {
        Config clientConfig = config.servers().kubeconfig() == null ? Config.autoConfigure(null)
                : Config.fromKubeconfig(Files.readString(config.servers().kubeconfig()));
        int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        clientConfig.setConnectionTimeout(millis);
        clientConfig.setRequestTimeout(millis);
        return clientConfig;
    }

    // ---- HAMi next to us ----

    /** HAMi's own webhook installed next to ours: both mutate every GPU pod. */
    private DoctorCheck hamiWebhook() {
        if (config.webhook().isEmpty()) {
            return DoctorCheck.skip("hami-webhook", "the webhook is off");
        }
        if (!config.needsKubernetes()) {
            return DoctorCheck.skip("hami-webhook", "no enabled part uses the Kubernetes API");
        }
        if (!apiOk) {
            return DoctorCheck.skip("hami-webhook", "the Kubernetes API check failed");
        }
        String own = config.webhookConfiguration().map(ManagedWebhookConfiguration::name)
                .orElse(AgentCommand.DEFAULT_WEBHOOK_CONFIG_NAME);
        List<MutatingWebhookConfiguration> all;
        try (KubernetesClient client = KubernetesClients.create(clientConfig())) {
            all = client.admissionRegistration().v1().mutatingWebhookConfigurations().list().getItems();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("hami-webhook", "cannot list MutatingWebhookConfigurations: " + e.getMessage(),
                    "grant list on mutatingwebhookconfigurations (manifests/base ClusterRole)");
        }
        List<HamiWebhookCoexistence.Conflict> conflicts = HamiWebhookCoexistence.find(all, own);
        if (conflicts.isEmpty()) {
            return DoctorCheck.pass("hami-webhook", "no MutatingWebhookConfiguration other than " + own
                    + " serves HAMi's webhook (" + all.size() + " checked)");
        }
        HamiWebhookCoexistence.Conflict first = conflicts.get(0);
        return new DoctorCheck("hami-webhook", Outcome.FAIL, conflicts.size() == 1 ? first.describe()
                : conflicts.size() + " MutatingWebhookConfigurations serve HAMi's webhook next to tenant-gateway's",
                conflicts.size() == 1 ? first.fix() : HamiWebhookConfiguration.fix("<name>") + " for each",
                conflicts.size() == 1 ? List.of() : conflicts.stream().map(HamiWebhookCoexistence.Conflict::describe)
                        .toList());
    }

    /** HAMi's device ConfigMap, read and parsed as the webhook will. */
    private DoctorCheck deviceConfigMap() {
        Optional<String> name = config.webhook().flatMap(WebhookSettings::deviceConfigMap);
        if (name.isEmpty()) {
            return DoctorCheck.skip("device-config", config.webhook().flatMap(WebhookSettings::deviceConfig)
                    .map(file -> "--device-config " + file + " (read at start)").orElse(config.webhook().isEmpty()
                            ? "the webhook is off" : "--device-config-map=\"\": HAMi's defaults"));
        }
        if (!apiOk) {
            return DoctorCheck.skip("device-config", "the Kubernetes API check failed");
        }
        String[] parts = DeviceConfigWatch.splitName(name.get());
        GenericKubernetesResource configMap;
        try (KubernetesClient client = KubernetesClients.create(clientConfig())) {
            // Untyped, as the webhook watches it: whatever a client stored there is read, then judged.
            configMap = client.genericKubernetesResources("v1", "ConfigMap").inNamespace(parts[0])
                    .withName(parts[1]).get();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("device-config", "cannot read ConfigMap " + name.get() + ": " + e.getMessage(),
                    "grant get/list/watch on that ConfigMap (manifests/base ClusterRole)");
        }
        if (configMap == null) {
            return DoctorCheck.warn("device-config", "ConfigMap " + name.get() + " not found: the webhook uses"
                    + " HAMi's defaults", "install HAMi's chart (it creates hami-scheduler-device), or point"
                    + " --device-config-map at the ConfigMap HAMi's scheduler reads");
        }
        try {
            DeviceConfig parsed = DeviceConfigWatch.parse(configMap, name.get());
            return DoctorCheck.pass("device-config", "ConfigMap " + name.get() + ": nvidia.resourceCountName="
                    + parsed.nvidia().resourceCountName());
        } catch (IllegalArgumentException e) {
            return DoctorCheck.fail("device-config", e.getMessage(), "correct device-config.yaml in the ConfigMap:"
                    + " the webhook keeps its last good config (and is not ready without one)");
        }
    }

    // ---- devices ----

    /**
     * Every vendor's registration of this node, as HAMi v2.10's scheduler reads it: each HAMi register annotation the
     * node carries (and the devices its capacity implies), decoded, or the reader's error. A failing reader is a
     * warning: that vendor's pods cannot be placed here, the agent's own parts are not affected.
     */
    private DoctorCheck registrations() {
        if (config.devices().isEmpty() && config.allocation().isEmpty() && config.devicePlugin().isEmpty()) {
            return DoctorCheck.skip("registrations", "no part reads this node (--device-source=none, no lock"
                    + " controller)");
        }
        if (!apiOk) {
            return DoctorCheck.skip("registrations", "the Kubernetes API check failed");
        }
        String nodeName = config.nodeName().orElse("");
        Node node;
        try (KubernetesClient client = KubernetesClients.create(clientConfig())) {
            node = client.nodes().withName(nodeName).get();
        } catch (IOException | RuntimeException e) {
            return DoctorCheck.fail("registrations", "cannot read node " + nodeName + ": " + e.getMessage(),
                    "grant get on nodes (manifests/base ClusterRole)");
        }
        if (node == null) {
            return DoctorCheck.warn("registrations", "node " + nodeName + " not found", "check --node-name (or"
                    + " NODE_NAME): it must be this node's name as kubectl get nodes shows it");
        }
        Map<String, RegisterCodec.Result> decoded = RegisterCodec.decodeNode(OwnNode.annotations(node),
                OwnNode.capacity(node), HamiRelease.V2_10, nodeName);
        if (decoded.isEmpty()) {
            return DoctorCheck.pass("registrations", "node " + nodeName + " carries no HAMi registration");
        }
        List<String> lines = new ArrayList<>();
        int failed = 0;
        for (Map.Entry<String, RegisterCodec.Result> entry : decoded.entrySet()) {
            RegisterCodec.Result result = entry.getValue();
            if (!result.isOk()) {
                failed++;
                lines.add(entry.getKey() + ": error: " + result.error());
                continue;
            }
            lines.add(entry.getKey() + ": " + result.devices().size() + " device(s)");
            for (RegisteredDevice device : result.devices()) {
                lines.add("  [" + device.index() + "] " + device.type() + " " + device.devmem() + " MiB, "
                        + device.devcore() + " cores, split " + device.count() + (device.health() ? "" : ", UNHEALTHY")
                        + " (" + device.id() + ")");
            }
        }
        String summary = decoded.size() + " registration(s) on node " + nodeName + ", as HAMi v2.10 reads them";
        if (failed > 0) {
            return new DoctorCheck("registrations", Outcome.WARN, failed + " of " + summary + " do not decode",
                    "the vendor's device plugin writes that annotation: check its version against HAMi's"
                            + " (tenant-gateway annotations decode - < node.json shows the same)", lines);
        }
        return new DoctorCheck("registrations", Outcome.PASS, summary, "", lines);
    }

    private DoctorCheck devices() {
        if (config.devices().isEmpty()) {
            return DoctorCheck.skip("devices", "--device-source=none");
        }
        var source = config.devices().get().createSource().orElseThrow();
        List<GpuDevice> found;
        try {
            found = source.discover();
        } catch (DeviceDiscoveryException e) {
            String fix = switch (e.reason()) {
                case NVIDIA_SMI_MISSING -> "install the NVIDIA driver utilities on the node and mount nvidia-smi"
                        + " into the pod, or set --nvidia-smi-path";
                case DRIVER_UNAVAILABLE -> "load the NVIDIA kernel driver (nvidia-smi on the node must work);"
                        + " a user-space/kernel version mismatch needs a reboot or a driver reinstall";
                case NO_DEVICES -> "this node has no GPU: run the agent with --device-source=none here, or use a"
                        + " nodeSelector for GPU nodes";
                case NVIDIA_SMI_TIMEOUT -> "nvidia-smi hangs: check the GPUs (dmesg, Xid errors); persistence mode"
                        + " helps";
                default -> "run nvidia-smi on the node and compare with the message";
            };
            return DoctorCheck.fail("devices", source.kind() + ": " + e.getMessage(), fix);
        }
        List<String> lines = new ArrayList<>(found.stream().map(d -> "[" + d.index() + "] " + d.type() + " "
                + d.devmemMiB() + " MiB, split " + d.count() + (d.healthy() ? "" : ", UNHEALTHY") + " (" + d.id()
                + ")").toList());
        StringBuilder summary = new StringBuilder(source.kind() + ": " + found.size() + " GPU(s)");
        // Simulated Hygon and Ascend devices (--mock-devices), as their plugins register them.
        for (SimulatedVendor vendor : DeviceRegistrar.simulatedVendors(config.devices().get())) {
            summary.append(", ").append(vendor.vendor().displayName()).append(": ").append(vendor.devices().size());
            vendor.devices().forEach(d -> lines.add(vendor.vendor().displayName() + " [" + d.index() + "] " + d.type()
                    + " " + d.devmem() + " MiB, split " + d.count() + (d.health() ? "" : ", UNHEALTHY") + " ("
                    + d.id() + ") in " + vendor.vendor().registerKey()));
        }
        return new DoctorCheck("devices", Outcome.PASS, summary.toString(), "", lines);
    }

    // ---- device plugin ----

    /** The kubelet side: the directory, kubelet.sock, and who serves the plugin socket (HAMi #2076). */
    private DoctorCheck devicePlugin() {
        DevicePluginConfig plugin = config.devicePlugin().get().plugin();
        if (!UnixSockets.available() || !Transports.isEpoll(group)) {
            return DoctorCheck.fail("device-plugin", "Unix domain sockets need Netty's native epoll, which does not"
                    + " load here", "run the agent on Linux (x86_64 or aarch64) from the image, which carries the"
                    + " epoll natives");
        }
        if (!Files.isDirectory(plugin.directory())) {
            return DoctorCheck.fail("device-plugin", "kubelet's device plugin directory " + plugin.directory()
                    + " does not exist here", "mount the host's /var/lib/kubelet/device-plugins into the pod"
                    + " (hostPath) and pass that path as --device-plugin-dir");
        }
        SocketProbe.Result probe = SocketProbe.probe(plugin.socket(), group, timeout);
        if (probe.kind() == SocketProbe.Kind.FOREIGN) {
            return DoctorCheck.fail("device-plugin", probe.detail() + ": the agent's device plugin does not start"
                    + " and the agent does not write hami.io/node-nvidia-register (two plugins must not both serve "
                    + plugin.resourceName() + ", HAMi #2076)", "remove HAMi's device plugin (helm upgrade hami"
                    + " --set devicePlugin.enabled=false, or keep its DaemonSet off these nodes) or NVIDIA's"
                    + " (nvidia-device-plugin-daemonset) from this node, then restart the agent; or keep that plugin"
                    + " and run the agent here with --device-plugin=false --device-source=none");
        }
        boolean kubelet = Files.exists(plugin.kubeletSocket());
        String state = switch (probe.kind()) {
            case OURS -> probe.detail();
            case STALE -> probe.detail() + "; the agent removes it when it serves";
            default -> "nobody serves " + plugin.socket() + " yet (the agent does once it runs)";
        };
        if (!kubelet) {
            return DoctorCheck.warn("device-plugin", state + "; no " + plugin.kubeletSocket(), "the kubelet is not"
                    + " running, or " + plugin.directory() + " is not its device plugin directory (kubelet's"
                    + " --root-dir + /device-plugins)");
        }
        String summary = state + "; " + plugin.kubeletSocket() + " present, resource " + plugin.resourceName();
        // Simulated Hygon and Ascend (--mock-devices): each vendor's plugin has its real plugin's socket; a real
        // plugin there means the simulated one stands aside for that vendor only.
        List<String> lines = new ArrayList<>();
        List<String> asides = new ArrayList<>();
        for (SimulatedVendor vendor : config.devices().map(DeviceRegistrar::simulatedVendors).orElse(List.of())) {
            Path socket = plugin.directory().resolve(vendor.vendor().socketName());
            SocketProbe.Result vendorProbe = SocketProbe.probe(socket, group, timeout);
            String name = vendor.vendor().displayName();
            lines.add(name + " (" + vendor.vendor().resourceName() + "): " + switch (vendorProbe.kind()) {
                case FOREIGN -> vendorProbe.detail() + ": the simulated " + name + " plugin stands aside and the agent"
                        + " does not write " + vendor.vendor().registerKey();
                case OURS, STALE -> vendorProbe.detail();
                default -> "nobody serves " + socket + " yet (the agent does once it runs)";
            });
            if (vendorProbe.kind() == SocketProbe.Kind.FOREIGN) {
                asides.add(name);
            }
        }
        if (!asides.isEmpty()) {
            return new DoctorCheck("device-plugin", Outcome.WARN, summary + "; a real plugin serves " + String.join(
                    ", ", asides), "simulated devices stand aside where the real plugin runs: drop those presets from"
                    + " --mock-devices on this node, or the real plugin if the hardware is not there", lines);
        }
        return new DoctorCheck("device-plugin", Outcome.PASS, summary, "", lines);
    }

    // ---- helpers ----

    private static String millisSince(long startNanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", (System.nanoTime() - startNanos) / 1_000_000.0);
    }

    static String human(Duration duration) {
        long seconds = Math.abs(duration.getSeconds());
        if (seconds < 120) {
            return seconds + "s";
        }
        if (seconds < 2 * 3600) {
            return seconds / 60 + "m";
        }
        if (seconds < 2 * 86400) {
            return seconds / 3600 + "h" + (seconds % 3600) / 60 + "m";
        }
        return seconds / 86400 + "d";
    }

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
        }
        dns.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
