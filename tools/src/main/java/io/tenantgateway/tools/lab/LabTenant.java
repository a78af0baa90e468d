package io.tenantgateway.tools.lab;

import static java.util.Objects.requireNonNull;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.tenantgateway.agent.Agent;
import io.tenantgateway.agent.PartViews;
import io.tenantgateway.agent.AgentCommand;
import io.tenantgateway.agent.devices.MockInventory;
import io.tenantgateway.agent.devices.VendorPreset;
import io.tenantgateway.certs.CertBundle;
import io.tenantgateway.certs.CertificateAuthority;
import io.tenantgateway.certs.CertificateRequest;
import io.tenantgateway.certs.ClientAuthMode;
import io.tenantgateway.certs.KeyAlgorithm;
import io.tenantgateway.certs.Pem;
import io.tenantgateway.certs.TlsContexts;
import io.tenantgateway.certs.TlsMaterial;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.deviceplugin.UnixSockets;
import io.tenantgateway.deviceplugin.testing.KubeletStandIn;
import io.tenantgateway.tunnel.proxy.ProxyClient;
import io.tenantgateway.tunnel.server.AgentAuthenticator;
import io.tenantgateway.tunnel.server.ProxyStrategy;
import io.tenantgateway.tunnel.server.TunnelServer;
import io.tenantgateway.tunnel.server.TunnelServerConfig;
import io.tenantgateway.tunnel.transport.Transports;
import io.tenantgateway.webhook.WebhookServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/**
 * One tenant of the lab: its CA, its API server (fabric8's mock server in CRUD mode, standing in for the
 * Kamaji-hosted kube-apiserver), its konnectivity-server (our Java one; token auth or mTLS), its webhook Service
 * address (kube-proxy stand-in) and its workers, each with a Node, a kubelet stand-in and an agent started with
 * {@code tenant-gateway run}'s real flags and wiring. The first worker's agent serves the tenant's webhook; with more
 * than one worker it announces {@code default-route=true} and the server routes by {@code defaultRoute,default}, so
 * every dial of the tenant's tunnel goes through that agent, whose dial policy the checks read. A Kamaji-style
 * worker ({@link WorkerSpec#nodeRole}) runs two agents, as under Kamaji with the chart's node role: the tunnel agent
 * (tunnel, webhook) and the node agent ({@code --tunnel=false}: devices, device plugin, lock controller, monitor).
 *
 * <p>Lifecycle: {@link #startControlPlane}, then {@link #startAgents} (or {@link Worker#startAgent} and {@link
 * Worker#startNodeAgent} per worker);
 * {@link #close()} stops everything in reverse. Methods are called from the lab's thread.
 */
final class LabTenant implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LabTenant.class);
    private static final Duration CERT_VALIDITY = Duration.ofDays(1);
    /** Linux's sun_path holds 108 bytes including the terminating NUL. */
    private static final int MAX_SOCKET_PATH = 107;
    /**
     * The agents' {@code --monitor-scan-interval}: short, so check 11 sees a region written by the HAMi-core
     * stand-in within a fraction of a second (HAMi's is 5 s).
     */
    static final Duration MONITOR_SCAN_INTERVAL = Duration.ofMillis(200);
    /**
     * The agents' {@code --monitor-cache-grace}: how long a deleted pod's cache directory stays, so check 11 sees it
     * removed within its wait (HAMi's is 5 minutes).
     */
    static final Duration MONITOR_CACHE_GRACE = Duration.ofSeconds(1);

    /** How the tenant's agent authenticates to its konnectivity-server. */
    enum AgentAuth {
        /** Kamaji's default: projected service-account token. */
        TOKEN("token auth"),
        /** Client certificate from the tenant CA ({@code --cluster-ca-cert} on the server). */
        MTLS("mTLS");

        final String label;

        AgentAuth(String label) {
            this.label = label;
        }
    }

    /**
     * One worker node of a tenant.
     *
     * @param mockGpus the worker's {@code --mock-gpus} ({@code ""}: none)
     * @param gpus how many GPUs that inventory has
     * @param mockDevices the worker's {@code --mock-devices}, Hygon and Ascend parts ({@code ""}: none), e.g.
     *     {@code Ascend910B4:2,DCU-K100:1}
     * @param webhook whether its agent serves the tenant's webhook (the Service's endpoint)
     * @param nodeRole Kamaji-style: two agents on the worker, as the chart's {@code mode=kamaji} with devices renders
     *     them: Kamaji's konnectivity-agent (tunnel and webhook, {@code --enable-lock-controller=false}, no devices)
     *     and the node role ({@code --tunnel=false}: device registration, device plugin, lock controller, vGPU
     *     monitor); otherwise one agent with everything on
     */
    record WorkerSpec(String node, String mockGpus, int gpus, String mockDevices, boolean webhook, boolean nodeRole) {
        WorkerSpec {
            requireNonNull(node, "node");
            requireNonNull(mockGpus, "mockGpus");
            requireNonNull(mockDevices, "mockDevices");
        }

        /** One agent with every part on. */
        WorkerSpec(String node, String mockGpus, int gpus, String mockDevices, boolean webhook) {
            this(node, mockGpus, gpus, mockDevices, webhook, false);
        }

        /**
         * What {@link #mockDevices} registers of Hygon and Ascend, in inventory order: the preset and how many of it
         * (read by the agent's own parser).
         */
        Map<VendorPreset, Integer> vendorDevices() {
            Map<VendorPreset, Integer> out = new LinkedHashMap<>();
            if (!mockDevices.isBlank()) {
                for (MockInventory.VendorEntry entry : MockInventory.parseDevices(mockDevices).vendorEntries()) {
                    out.merge(entry.preset(), entry.count(), Integer::sum);
                }
            }
            return out;
        }
    }

    /**
     * @param workers the tenant's workers, the first serving its webhook
     * @param enableAscend {@code --enable-ascend} on the agent serving the webhook (HAMi's Ascend backends)
     */
    record Spec(String name, String namespace, AgentAuth auth, List<WorkerSpec> workers, boolean enableAscend) {
        Spec {
            workers = List.copyOf(workers);
            if (workers.isEmpty()) {
                throw new IllegalArgumentException("tenant " + name + ": no workers (expected: at least one)");
            }
        }

        String serverId() {
            return name + "-kas-0";
        }

        /** The first worker's node: its agent serves the webhook. */
        String node() {
            return workers.get(0).node();
        }

        List<String> nodes() {
            return workers.stream().map(WorkerSpec::node).toList();
        }
    }

    final Spec spec;
    private final boolean first;
    private final Path dir;
    private final LabOptions options;
    private final Clock clock;
    private final EventLoopGroup group;
    private final SecureRandom random = new SecureRandom();
    private final List<AutoCloseable> started = new ArrayList<>();

    private CertificateAuthority ca;
    private CertBundle serverCertificate;
    private CertBundle agentCertificate;
    private String token;
    private KubernetesMockServer apiServer;
    private KubernetesClient client;
    private TunnelServer server;
    private ServiceProxy webhookService;
    private final List<Worker> workers = new ArrayList<>();
    private SslContext webhookClientTls;
    private Path kubeconfig;

    /**
     * @param first whether this is the first tenant ({@code tenant-a}): {@link Breakage}s name their tenant
     * @param group event loops for the Service proxy, the ProxyService clients and credential probes
     */
    LabTenant(Spec spec, boolean first, Path dir, LabOptions options, Clock clock, EventLoopGroup group) {
        this.spec = requireNonNull(spec, "spec");
        this.first = first;
        this.dir = requireNonNull(dir, "dir");
        this.options = requireNonNull(options, "options");
        this.clock = requireNonNull(clock, "clock");
        this.group = requireNonNull(group, "group");
    }

    private boolean broken(Breakage breakage) {
        return options.broken(breakage) && breakage.appliesTo(first);
    }

    /**
     * CA and certificates, the API server with the worker's Node, the konnectivity-server and the webhook Service.
     *
     * @param sharedApiServer another tenant's API server to use instead of an own one ({@link
     *     Breakage#SHARED_API_SERVER}), or {@code null}
     */
    void startControlPlane(KubernetesMockServer sharedApiServer) {
        try {
            Files.createDirectories(dir);
            ca = CertificateAuthority.create(spec.name() + "-ca", KeyAlgorithm.EC_P256, CERT_VALIDITY, clock);
            // Kamaji: the agent-facing certificate is the tenant apiserver's serving certificate.
            serverCertificate = ca.issue(CertificateRequest.server(spec.name() + "-apiserver")
                    .ipAddresses("127.0.0.1").dnsNames("localhost").validity(CERT_VALIDITY).build());
            CertBundle webhookCertificate = ca.issue(CertificateRequest.server(AdmissionCaller.WEBHOOK_DNS_NAME)
                    .dnsNames(AdmissionCaller.WEBHOOK_DNS_NAME, "hami-scheduler.kube-system.svc")
                    .validity(CERT_VALIDITY).build());
            agentCertificate = ca.issue(CertificateRequest.client("konnectivity-agent").validity(CERT_VALIDITY)
                    .build());
            Pem.writeCertificates(List.of(ca.certificate()), caFile());
            Pem.writeBundle(webhookCertificate, dir.resolve("webhook.crt"), dir.resolve("webhook.key"));
            Pem.writeBundle(agentCertificate, dir.resolve("agent.crt"), dir.resolve("agent.key"));
            token = newToken();
            String agentToken = broken(Breakage.AGENT_TOKEN) ? newToken() : token;
            Files.writeString(dir.resolve("token"), agentToken + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + spec.name() + "'s files to " + dir, e);
        }
        webhookClientTls = TlsContexts.client(TlsMaterial.of(null, ca.trustBundle()), clock);

        if (sharedApiServer != null) {
            apiServer = sharedApiServer;
        } else {
            Map<ServerRequest, Queue<ServerResponse>> noExpectations = new HashMap<>();
            apiServer = new KubernetesMockServer(new Context(), new MockWebServer(), noExpectations,
                    new DiscoveryDispatcher(noExpectations), false);
            apiServer.init(InetAddress.getLoopbackAddress(), 0);
            started.add(apiServer::destroy);
        }
        // 127.0.0.1, not the mock server's "localhost", which may resolve to ::1 where nothing listens.
        String url = "http://127.0.0.1:" + apiServer.getPort() + "/";
        client = apiServer.createClient(builder -> builder.editOrNewConfig().withMasterUrl(url)
                .withRequestRetryBackoffLimit(0).endConfig());
        started.add(client);
        kubeconfig = writeKubeconfig();
        for (WorkerSpec worker : spec.workers()) {
            client.nodes().resource(new NodeBuilder()
                    .withNewMetadata().withName(worker.node())
                        .addToLabels("kubernetes.io/hostname", worker.node())
                        .addToLabels("kubernetes.io/os", "linux")
                        .addToLabels("tenant-gateway.io/lab-tenant", spec.name())
                    .endMetadata()
                    .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition()
                    .endStatus()
                    .build()).create();
        }

        server = newServer(0);
        server.start();
        webhookService = new ServiceProxy(AdmissionCaller.WEBHOOK_DNS_NAME + " (" + spec.name() + ")", group);
        webhookService.start();
        started.add(webhookService);
        for (WorkerSpec worker : spec.workers()) {
            Worker added = new Worker(worker, workers.isEmpty() ? dir : dir.resolve(worker.node()));
            workers.add(added);
            added.startKubelet();
        }
    }

    /** Whether the agent serving the webhook runs HAMi's Ascend backends ({@code --enable-ascend}). */
    boolean ascendWebhook() {
        return spec.enableAscend() && !broken(Breakage.ASCEND_WEBHOOK);
    }

    /** Whether the tenant's tunnel routes every dial through its first worker's agent (more than one worker). */
    private boolean routesThroughFirstWorker() {
        return spec.workers().size() > 1;
    }

    /**
     * One worker of the tenant: its kubelet stand-in (under its directory: the tenant's for the first worker,
     * {@code <tenant>/<node>} for the others) and its agent, or with {@link WorkerSpec#nodeRole} its two agents:
     * the tunnel agent (Kamaji's konnectivity-agent: tunnel and webhook) and the node agent ({@code --tunnel=false}:
     * devices, device plugin, lock controller, vGPU monitor).
     */
    final class Worker {
        /**
         * The flags only the node role takes (devices, device plugin, lock controller, monitor); with {@link
         * WorkerSpec#nodeRole} the tunnel agent runs without them and with {@code --enable-lock-controller=false}.
         */
        private static final List<String> NODE_FLAGS = List.of("--node-name=", "--device-source=",
                "--handshake-interval=", "--monitor", "--device-plugin", "--enable-lock-controller=",
                "--pod-field-selector=", "--mock-gpus=", "--mock-devices=", "--device-split-count=");
        /** The flags of the tunnel and the webhook: the node role ({@code --tunnel=false}) takes none of them. */
        private static final List<String> TUNNEL_FLAGS = List.of("--proxy-server-host=", "--proxy-server-port=",
                "--ca-cert=", "--sync-interval-cap=", "--service-account-token-path=", "--agent-cert=",
                "--agent-key=", "--agent-identifiers=", "--dial-allow=", "--webhook-", "--enable-webhook=",
                "--enable-ascend");

        final WorkerSpec spec;
        private final Path home;
        private KubeletStandIn kubelet;
        private Path kubeletDir;
        private Path ownedKubeletDir;
        private Agent agent;
        private Agent nodeAgent;

        private Worker(WorkerSpec spec, Path home) {
            this.spec = spec;
            this.home = home;
        }

        String node() {
            return spec.node();
        }

        /**
         * The worker's agent with the tunnel (and the webhook where the worker serves it), {@code null} before
         * {@link #startAgent}; without {@link WorkerSpec#nodeRole} also the one with the devices.
         */
        Agent agent() {
            return agent;
        }

        /**
         * The agent with the devices, the device plugin, the lock controller and the monitor: the node agent
         * ({@code --tunnel=false}) with {@link WorkerSpec#nodeRole}, else {@link #agent()}.
         */
        Agent nodeAgent() {
            return spec.nodeRole() ? nodeAgent : agent;
        }

        /** Whether the worker runs two agents, Kamaji-style ({@link WorkerSpec#nodeRole}). */
        boolean split() {
            return spec.nodeRole();
        }

        /** The worker's agents: the tunnel agent, then the node agent where there is one. */
        List<Agent> agents() {
            List<Agent> out = new ArrayList<>();
            if (agent != null) {
                out.add(agent);
            }
            if (split() && nodeAgent != null) {
                out.add(nodeAgent);
            }
            return out;
        }

        /** How the output names the agent with the tunnel: {@code agent worker-a} or {@code tunnel agent worker-a}. */
        String tunnelAgentLabel() {
            return (split() ? "tunnel agent " : "agent ") + spec.node();
        }

        /** How the output names the agent with the devices: {@code agent worker-a} or {@code node agent worker-a}. */
        String nodeAgentLabel() {
            return (split() ? "node agent " : "agent ") + spec.node();
        }

        /** The node agent's {@code --agent-id} (its name on its status page and in its logs). */
        String nodeAgentId() {
            return spec.node() + "-node";
        }

        /** The worker's kubelet stand-in, {@code null} where Unix sockets are not available. */
        KubeletStandIn kubelet() {
            return kubelet;
        }

        /**
         * The worker's host file system as its agent sees it ({@code --device-plugin-host-root}): where Allocate
         * creates HAMi-core's per-container directories, the vGPU monitor reads them and the HAMi-core stand-in
         * writes its regions.
         */
        Path hostRoot() {
            return home.resolve("host").toAbsolutePath();
        }

        LabTenant tenant() {
            return LabTenant.this;
        }

        /**
         * The worker's kubelet stand-in: the Registration server on {@code kubelet.sock} its agent's device plugins
         * register with (a temporary directory when the work directory's path is too long for a Unix socket).
         */
        private void startKubelet() {
            if (!UnixSockets.available()) {
                log.warn("lab: {} has no kubelet stand-in: Unix sockets need Netty's native epoll (Linux)",
                        spec.node());
                return;
            }
            try {
                kubeletDir = home.resolve("kubelet").toAbsolutePath();
                // The longest socket name a plugin serves there: Ascend910B4.sock, hygon.com_dcunum.
                if (kubeletDir.resolve("Ascend910B4.sock").toString().length() > MAX_SOCKET_PATH) {
                    ownedKubeletDir = Files.createTempDirectory("tg-kubelet-");
                    kubeletDir = ownedKubeletDir;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a directory for " + spec.node() + "'s kubelet", e);
            }
            kubelet = KubeletStandIn.start(kubeletDir);
            started.add(kubelet);
        }

        /**
         * Where this worker's agent serves its device plugins: kubelet's directory (elsewhere when broken on
         * purpose).
         */
        private Path devicePluginDir() {
            if (!broken(Breakage.KUBELET_DIR)) {
                return kubeletDir;
            }
            try {
                return Files.createDirectories(kubeletDir.resolveSibling(kubeletDir.getFileName() + "-elsewhere"));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + kubeletDir + "-elsewhere", e);
            }
        }

        /**
         * The agent of the worker with the tunnel, from {@code tenant-gateway run}'s flags (see {@link
         * #agentArgs()}).
         */
        void startAgent() {
            Agent created = newAgent(agentArgs());
            agent = created;
            created.start();
            PartViews.webhook(created).map(WebhookServer::port)
                    .ifPresent(port -> webhookService.endpoint(new InetSocketAddress("127.0.0.1", port)));
        }

        /** The node agent ({@code --tunnel=false}, see {@link #nodeAgentArgs()}); nothing without one. */
        void startNodeAgent() {
            if (!split()) {
                return;
            }
            Agent created = newAgent(nodeAgentArgs());
            nodeAgent = created;
            created.start();
        }

        private Agent newAgent(List<String> args) {
            AgentCommand command = new AgentCommand();
            new CommandLine(command).parseArgs(args.toArray(String[]::new));
            Agent created = new Agent(command.toConfig(), clock);
            synchronized (started) { // the workers' agents start at once
                started.add(created);
            }
            return created;
        }

        /**
         * The {@code tenant-gateway run} arguments of the agent with the tunnel: {@link #allArgs()}, or with {@link
         * WorkerSpec#nodeRole} those of Kamaji's konnectivity-agent as the chart renders them: no device, device
         * plugin, lock controller or monitor flag, {@code --enable-lock-controller=false}.
         */
        List<String> agentArgs() {
            if (!split()) {
                return allArgs();
            }
            List<String> args = allArgs().stream().filter(arg -> NODE_FLAGS.stream().noneMatch(arg::startsWith))
                    .collect(Collectors.toCollection(ArrayList::new));
            args.add("--enable-lock-controller=false");
            return args;
        }

        /**
         * The node agent's arguments (with {@link WorkerSpec#nodeRole}), as the chart's node DaemonSet renders them:
         * {@code --tunnel=false}, its own {@code --agent-id} and health and admin ports, and the same device, device
         * plugin, lock controller and monitor flags {@link #allArgs()} has; none of the tunnel's or the webhook's.
         */
        List<String> nodeAgentArgs() {
            List<String> args = new ArrayList<>(List.of("--tunnel=false", "--agent-id=" + nodeAgentId()));
            allArgs().stream().filter(arg -> !arg.startsWith("--agent-id="))
                    .filter(arg -> TUNNEL_FLAGS.stream().noneMatch(arg::startsWith)).forEach(args::add);
            return args;
        }

        /**
         * One agent's {@code tenant-gateway run} arguments with every part: short intervals, everything on
         * loopback.
         */
        private List<String> allArgs() {
            List<String> args = new ArrayList<>(List.of(
                    "--proxy-server-host=127.0.0.1",
                    "--proxy-server-port=" + server.agentAddress().getPort(),
                    "--ca-cert=" + caFile(),
                    "--agent-id=" + spec.node(),
                    "--sync-interval-cap=1s",
                    "--health-server-host=127.0.0.1", "--health-server-port=0",
                    "--admin-bind-address=127.0.0.1", "--admin-server-port=0",
                    "--kubeconfig=" + kubeconfig,
                    "--node-name=" + spec.node(),
                    "--device-source=" + (broken(Breakage.DEVICE_REGISTRATION) ? "none" : "mock"),
                    "--handshake-interval=2s",
                    "--monitor-listen=127.0.0.1:0",
                    "--monitor-scan-interval=" + GoDuration.format(MONITOR_SCAN_INTERVAL),
                    "--monitor-cache-grace=" + GoDuration.format(MONITOR_CACHE_GRACE),
                    // HAMi-core's host directories under the worker's directory, with or without the device plugin:
                    // the vGPU monitor reads them and removes those of pods it does not know, never the host's.
                    "--device-plugin-host-root=" + hostRoot(),
                    "--enable-lock-controller=true",
                    // fabric8's CRUD server matches no pod with a spec.nodeName field selector.
                    "--pod-field-selector=false",
                    "--shutdown-grace=2s"));
            if (!spec.mockGpus().isEmpty()) {
                args.add("--mock-gpus=" + spec.mockGpus());
            }
            if (!spec.mockDevices().isEmpty()) {
                args.add("--mock-devices=" + spec.mockDevices());
            }
            if (LabTenant.this.spec.auth() == AgentAuth.TOKEN) {
                args.add("--service-account-token-path=" + dir.resolve("token"));
            } else {
                args.add("--agent-cert=" + dir.resolve("agent.crt"));
                args.add("--agent-key=" + dir.resolve("agent.key"));
            }
            if (!spec.webhook() || broken(Breakage.WEBHOOK)) {
                args.add("--enable-webhook=false");
            } else {
                args.add("--webhook-tls-cert=" + dir.resolve("webhook.crt"));
                args.add("--webhook-tls-key=" + dir.resolve("webhook.key"));
                args.add("--webhook-listen=127.0.0.1:0");
                if (ascendWebhook()) {
                    args.add("--enable-ascend");
                }
            }
            if (routesThroughFirstWorker() && this == workers.get(0)) {
                args.add("--agent-identifiers=default-route=true");
            }
            if (kubelet != null && !broken(Breakage.DEVICE_PLUGIN) && !broken(Breakage.DEVICE_REGISTRATION)) {
                // The worker's kubelet path: registration, ListAndWatch and Allocate over the stand-in's Unix
                // sockets.
                args.add("--device-plugin=true");
                args.add("--device-plugin-dir=" + devicePluginDir());
            }
            if (broken(Breakage.MONITOR)) {
                args.add("--monitor=false");
            }
            if (broken(Breakage.GPU_SHARING)) {
                args.add("--device-split-count=1");
            }
            if (broken(Breakage.DIAL_POLICY)) {
                args.add("--dial-allow=0.0.0.0/0,::/0");
            } else {
                // The tunnel may reach this tenant's webhook Service and nothing else: the Service lives on
                // 127.0.0.1, which the default denies (loopback) unless named; its port is the only port allowed.
                // The agent's admin port on 127.0.0.1 stays closed either way.
                args.add("--dial-allow=127.0.0.1,port:" + webhookService.address().getPort());
            }
            return args;
        }

        private void close() {
            if (nodeAgent != null) {
                LabTenant.this.close(nodeAgent);
            }
            if (agent != null) {
                LabTenant.this.close(agent);
            }
        }
    }

    /**
     * Stops the konnectivity-server (every agent stream drops) and starts it again on the same address, or on a new
     * port with {@link Breakage#SERVER_ADDRESS}.
     */
    void restartServer() {
        int port = broken(Breakage.SERVER_ADDRESS) ? 0 : server.agentAddress().getPort();
        server.close();
        server = newServer(port);
        server.start();
    }

    private TunnelServer newServer(int agentPort) {
        TunnelServerConfig.Builder config = TunnelServerConfig.builder(TlsMaterial.of(serverCertificate,
                        ca.trustBundle()))
                .serverId(spec.serverId()).serverCount(1)
                .agentAddress(new InetSocketAddress("127.0.0.1", agentPort))
                .eventLoopThreads(1);
        if (routesThroughFirstWorker()) {
            // --proxy-strategies=defaultRoute,default: the webhook-serving agent carries every dial (the others stay
            // connected), so what a dial meets is one agent's dial policy, whichever worker it would have landed on.
            config.strategies(List.of(ProxyStrategy.DEFAULT_ROUTE, ProxyStrategy.DEFAULT));
        }
        if (broken(Breakage.SERVER_B_AUTH)) {
            log.warn("lab: {} konnectivity-server authenticates no agent (broken on purpose)", spec.name());
        } else if (spec.auth() == AgentAuth.TOKEN) {
            config.agentAuthenticator(AgentAuthenticator.staticTokens(Set.of(token)));
        } else {
            config.agentClientAuth(ClientAuthMode.REQUIRE);
        }
        Path socket = dir.resolve("konnectivity-server.socket").toAbsolutePath(); // Kamaji's --uds-name
        if (Transports.epollAvailable() && socket.toString().length() <= MAX_SOCKET_PATH) {
            config.udsPath(socket);
        } else {
            // Unix sockets need Netty's native epoll (Linux) and a short path; otherwise kube-apiserver's side of
            // the lab reaches the server over loopback TCP.
            config.frontendAddress(new InetSocketAddress("127.0.0.1", 0));
        }
        return new TunnelServer(config.build(), clock);
    }

    /** A single-use ProxyService client, as kube-apiserver opens one per dial. */
    ProxyClient proxyClient() {
        ProxyClient.Builder builder = ProxyClient.builder().eventLoopGroup(group).clock(clock)
                .dialTimeout(Lab.CALL_TIMEOUT);
        TunnelServer current = server;
        return (current.udsPath() != null ? builder.unixSocket(current.udsPath())
                : builder.tcp(current.frontendAddress(), null)).build();
    }

    AdmissionCaller admissionCaller() {
        return new AdmissionCaller(spec.serverId(), this::proxyClient, webhookService::address, webhookClientTls,
                client, Lab.CALL_TIMEOUT);
    }

    /** Where kube-apiserver reaches the konnectivity-server. */
    String frontend() {
        return server.udsPath() != null ? "uds " + server.udsPath() : "tcp " + hostPort(server.frontendAddress());
    }

    static String hostPort(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    private String newToken() {
        byte[] bytes = new byte[24];
        random.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private Path caFile() {
        return dir.resolve("ca.crt");
    }

    private Path writeKubeconfig() {
        return io.tenantgateway.tools.kube.Kubeconfigs.write(dir.resolve("kubeconfig"), spec.name(),
                client.getMasterUrl().toString(), spec.namespace(), "lab");
    }

    // --- views for the checks and the report ---------------------------------------------------------------

    CertificateAuthority ca() {
        return ca;
    }

    CertBundle agentCertificate() {
        return agentCertificate;
    }

    /** The token this tenant's server accepts (the real one, also when the agent's file is broken). */
    String token() {
        return token;
    }

    KubernetesMockServer apiServer() {
        return apiServer;
    }

    KubernetesClient client() {
        return client;
    }

    TunnelServer server() {
        return server;
    }

    ServiceProxy webhookService() {
        return webhookService;
    }

    /** The first worker's agent: it serves the webhook. */
    Agent agent() {
        return workers.get(0).agent();
    }

    /** The workers, the first serving the webhook. */
    List<Worker> workers() {
        return List.copyOf(workers);
    }

    /** The worker named {@code node}, if it is one of this tenant's. */
    Optional<Worker> worker(String node) {
        return workers.stream().filter(w -> w.node().equals(node)).findFirst();
    }

    /** Starts every worker's agents, one after another (the lab starts them at once). */
    void startAgents() {
        for (Worker worker : workers) {
            worker.startAgent();
            worker.startNodeAgent();
        }
    }

    Path kubeconfig() {
        return kubeconfig;
    }

    /** The first worker's kubelet stand-in, {@code null} where Unix sockets are not available. */
    KubeletStandIn kubelet() {
        return workers.get(0).kubelet();
    }

    Path dir() {
        return dir;
    }

    String apiUrl() {
        return client.getMasterUrl().toString();
    }

    /** Drops the API requests the mock server recorded (it keeps every one), so a long-running lab stays small. */
    void forgetRecordedRequests() throws InterruptedException {
        while (apiServer.takeRequest(1, TimeUnit.MILLISECONDS) != null) {
            // discard
        }
    }

    /**
     * The CRUD dispatcher plus the core discovery documents kubectl reads before {@code get} (the CRUD server would
     * answer {@code /api} with every stored object), so {@code kubectl --kubeconfig … get nodes,pods -A} works
     * against a running lab.
     */
    static final class DiscoveryDispatcher extends KubernetesMixedDispatcher {
        private static final String API_VERSIONS = """
                {"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}""";
        private static final String API_GROUPS = """
                {"kind":"APIGroupList","apiVersion":"v1","groups":[]}""";
        private static final String CORE_RESOURCES = """
                {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[%s]}""".formatted(
                Stream.of("nodes,node,Node,false,no", "pods,pod,Pod,true,po", "events,event,Event,true,ev",
                        "namespaces,namespace,Namespace,false,ns").map(r -> r.split(",")).map(r -> """
                        {"name":"%s","singularName":"%s","kind":"%s","namespaced":%s,"shortNames":["%s"],\
                        "verbs":["create","delete","get","list","patch","update","watch"]}""".formatted((Object[]) r))
                        .collect(Collectors.joining(",")));

        DiscoveryDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
            super(responses);
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath() == null ? "" : request.getPath().replaceFirst("\\?.*", "");
            String body = !"GET".equals(request.getMethod()) ? null : switch (path) {
                case "/api" -> API_VERSIONS;
                case "/apis" -> API_GROUPS;
                case "/api/v1" -> CORE_RESOURCES;
                default -> null;
            };
            return body == null ? super.dispatch(request) : new MockResponse().setResponseCode(200)
                    .setHeader("Content-Type", "application/json").setBody(body);
        }
    }

    @Override
    public void close() {
        // Reverse order of start; the server is replaced by restarts, so it is closed by reference here.
        List<AutoCloseable> reverse;
        synchronized (started) {
            reverse = new ArrayList<>(started);
            started.clear();
        }
        Collections.reverse(reverse);
        for (Worker worker : workers) {
            worker.close();
            reverse.removeAll(worker.agents());
        }
        if (server != null) {
            server.close();
        }
        for (AutoCloseable part : reverse) {
            close(part);
        }
        for (Worker worker : workers) {
            if (worker.ownedKubeletDir != null) {
                Lab.deleteTree(worker.ownedKubeletDir, path -> false);
            }
        }
    }

    private void close(AutoCloseable part) {
        try {
            part.close();
        } catch (Exception e) {
            log.warn("lab: closing {} of {} failed: {}", part.getClass().getSimpleName(), spec.name(), e.toString());
        }
    }
}
