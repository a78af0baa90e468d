package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.util.NetUtil;
import io.tenantgateway.agent.AgentConfig;
import io.tenantgateway.agent.Parts;
import io.tenantgateway.agent.doctor.DoctorCheck;
import io.tenantgateway.agent.doctor.DoctorContext;
import io.tenantgateway.agent.doctor.DoctorStage;
import io.tenantgateway.agent.doctor.Outcome;
import io.tenantgateway.agent.doctor.PartDoctor;
import io.tenantgateway.agent.k8s.KubernetesClients;
import io.tenantgateway.agent.k8s.KubernetesPermissions;
import io.tenantgateway.agent.k8s.KubernetesPermissions.Permission;
import io.tenantgateway.agent.node.OwnNode;
import io.tenantgateway.agent.part.Channels;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.certs.TrustBundle;
import io.tenantgateway.common.concurrent.DaemonThreads;
import io.tenantgateway.common.net.HostPort;
import io.tenantgateway.hami.HamiRelease;
import io.tenantgateway.hami.RegisterCodec;
import io.tenantgateway.hami.RegisteredDevice;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The node-side checklist: everything the agent needs before it can serve, checked in the order the agent uses it —
 * files, DNS, TCP, TLS, the Connect handshake, the Kubernetes API, the device source. The tunnel's and the API's
 * checks are here; each part's come from its entry in the list of parts ({@link PartDoctor}), at the
 * {@link DoctorStage} whose inputs they need. A check whose input failed is skipped, so the first failure is the one
 * to fix. Runs on the calling (CLI) thread; network steps have a timeout each; DNS runs on its own thread because the
 * JDK resolver cannot be interrupted.
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
        // With --tunnel=false each of the tunnel's checks says it is off, so the list keeps its names.
        boolean tunnel = config.tunnel().isPresent();
        checks.add(tunnel ? caCert() : tunnelOff("ca-cert"));
        checks.add(tunnel ? agentCert() : tunnelOff("agent-cert"));
        checks.add(tunnel ? token() : tunnelOff("token"));
        stage(DoctorStage.FILES);
        checks.add(tunnel ? dns() : tunnelOff("dns"));
        checks.add(tunnel ? tcp() : tunnelOff("tcp"));
        checks.add(tunnel ? tls() : tunnelOff("tls"));
        checks.add(tunnel ? connect() : tunnelOff("grpc-connect"));
        checks.add(kubernetes());
        stage(DoctorStage.API);
        stage(DoctorStage.DEVICES);
        checks.add(registrations());
        stage(DoctorStage.KUBELET);
        return List.copyOf(checks);
    }

    /** Every part's lines at {@code stage}, in the order of the list of parts (off parts say so themselves). */
    private void stage(DoctorStage stage) {
        for (PartKind kind : Parts.all(config)) {
            if (kind instanceof PartDoctor part) {
                checks.addAll(part.doctor(stage, context));
            }
        }
    }

    private String parts() {
        return Stream.concat(config.tunnel().stream().map(tunnel -> "tunnel"), Parts.enabled(config).stream()
                .map(part -> part.plan().name())).collect(Collectors.joining(", "));
    }

    private static DoctorCheck tunnelOff(String name) {
        return DoctorCheck.skip(name, "tunnel off (--tunnel=false)");
    }

    /** The tunnel's settings; its checks run only when it is on. */
    private TunnelConfig tunnel() {
        return config.tunnel().orElseThrow();
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
        return DoctorCheck.certificateValidity(name, file, leaf, renewFix, clock.instant());
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
                + " or components/report-node-capacity for nodes/status patch, components/webhook-tls-secret for the"
                + " Secret; table in manifests/README.md),"
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

    // ---- devices ----

    /**
     * Every vendor's registration of this node, as the {@code --hami-compat} release's scheduler reads it (v2.10
     * without the webhook): each HAMi register annotation the
     * node carries (and the devices its capacity implies), decoded, or the reader's error. A failing reader is a
     * warning: that vendor's pods cannot be placed here, the agent's own parts are not affected.
     */
    private DoctorCheck registrations() {
        if (!KubernetesPermissions.keys(KubernetesPermissions.needed(Parts.apiUses(Parts.enabled(config), false)))
                .contains("core/nodes:get")) {
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
        HamiRelease release = config.hamiRelease();
        Map<String, RegisterCodec.Result> decoded = RegisterCodec.decodeNode(OwnNode.annotations(node),
                OwnNode.capacity(node), OwnNode.labels(node), release, nodeName);
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
        String summary = decoded.size() + " registration(s) on node " + nodeName + ", as HAMi " + release.label()
                + " reads them";
        if (failed > 0) {
            return new DoctorCheck("registrations", Outcome.WARN, failed + " of " + summary + " do not decode",
                    "the vendor's device plugin writes that annotation: check its version against HAMi's"
                            + " (tenant-gateway annotations decode - < node.json shows the same)", lines);
        }
        return new DoctorCheck("registrations", Outcome.PASS, summary, "", lines);
    }

    // ---- helpers ----

    private static String millisSince(long startNanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", (System.nanoTime() - startNanos) / 1_000_000.0);
    }

    static String human(Duration duration) {
        return DoctorCheck.human(duration);
    }

    /** What the parts' checks get: the doctor's clock, timeout and event loop, and what the API check found. */
    private final DoctorContext context = new DoctorContext() {
        private final Channels channels = new Channels();

        @Override
        public Clock clock() {
            return clock;
        }

        @Override
        public Duration timeout() {
            return timeout;
        }

        @Override
        public EventLoopGroup group() {
            return group;
        }

        @Override
        public boolean needsApi() {
            return config.needsKubernetes();
        }

        @Override
        public boolean apiOk() {
            return apiOk;
        }

        @Override
        public KubernetesClient kubernetes() throws IOException {
            return KubernetesClients.create(clientConfig());
        }

        @Override
        public <T> io.tenantgateway.agent.part.Channel<T> channel(io.tenantgateway.agent.part.Channel.Key<T> key) {
            return channels.get(key);
        }
    };

    @Override
    public void close() {
        if (connection != null) {
            connection.close();
        }
        dns.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
