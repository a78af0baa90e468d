package io.tenantgateway.agent;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.logging.LogSetup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code tenant-gateway run}: the agent. Accepts every {@code konnectivity-agent} flag with the upstream default
 * (so Kamaji's fixed argument list works unchanged) plus tenant-gateway's own flags. Flags map onto
 * {@link AgentConfig} once, here; nothing else reads them.
 *
 * <p>Every flag can also come from {@code --config FILE} (YAML, keys are the flag names without dashes); a flag on
 * the command line wins over the file.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false, usageHelpWidth = 120,
        description = {"Run the agent: a drop-in konnectivity-agent, plus (when enabled) the HAMi webhook, GPU",
            "device registration and the node-lock controller.",
            "With only konnectivity-agent flags it is a pure konnectivity-agent."})
public final class AgentCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(AgentCommand.class);
    /** Name of the MutatingWebhookConfiguration in manifests/base. */
    public static final String DEFAULT_WEBHOOK_CONFIG_NAME = "tenant-gateway-hami-webhook";
    /** Node name the flags are validated with while the real one is read from the API (a valid DNS label). */
    static final String PENDING_NODE_NAME = "node-name-pending";

    @Spec
    CommandSpec spec;

    // --- konnectivity-agent flags (same names and defaults as upstream) ---------------------------------------

    @Option(names = "--proxy-server-host", defaultValue = "127.0.0.1", order = 1,
            description = "konnectivity-server address (the load balancer of all replicas); also the TLS name.")
    String proxyServerHost;

    @Option(names = "--proxy-server-port", defaultValue = "8091", order = 1,
            description = "konnectivity-server agent port (Kamaji: 8132). Default: ${DEFAULT-VALUE}.")
    int proxyServerPort;

    @Option(names = "--ca-cert", order = 1, description = "CA the server certificate must chain to (Kamaji: the"
            + " service-account ca.crt).")
    Path caCert;

    @Option(names = "--agent-cert", order = 1, description = "Client certificate for mTLS to the server.")
    Path agentCert;

    @Option(names = "--agent-key", order = 1, description = "Key of --agent-cert.")
    Path agentKey;

    @Option(names = "--alpn-proto", split = ",", order = 1, description = "ALPN protocols to offer (must include h2).")
    List<String> alpnProtos = new ArrayList<>();

    @Option(names = "--service-account-token-path", order = 1,
            description = "Bearer token file sent as 'authorization'; re-read on every connection attempt.")
    Path serviceAccountTokenPath;

    @Option(names = "--agent-id", defaultValue = "${env:PROXY_AGENT_ID}", order = 1,
            description = "Agent id (default: env PROXY_AGENT_ID, else a random UUID).")
    String agentId;

    @Option(names = "--agent-identifiers", defaultValue = "", order = 1,
            description = "host=..&ipv4=..&ipv6=..&cidr=..&default-route=true for the server's proxy strategies.")
    String agentIdentifiers;

    @Option(names = "--sync-interval", defaultValue = "1s", order = 1, description = "Default: ${DEFAULT-VALUE}.")
    String syncInterval;

    @Option(names = "--sync-interval-cap", defaultValue = "10s", order = 1, description = "Default: ${DEFAULT-VALUE}.")
    String syncIntervalCap;

    @Option(names = "--probe-interval", defaultValue = "1s", order = 1, description = "Default: ${DEFAULT-VALUE}.")
    String probeInterval;

    @Option(names = "--sync-forever", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "Keep connecting even when servercount connections exist.")
    boolean syncForever;

    @Option(names = "--keepalive-time", defaultValue = "1h", order = 1,
            description = "gRPC keepalive interval (>= 30s). Default: ${DEFAULT-VALUE}.")
    String keepaliveTime;

    @Option(names = "--xfr-channel-size", defaultValue = "150", order = 1,
            description = "Per-tunnel buffer in packets (against servers without flow control). Default: ${DEFAULT-VALUE}.")
    int xfrChannelSize;

    @Option(names = "--count-server-leases", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "Count valid konnectivity-server Leases as the server count.")
    boolean countServerLeases;

    @Option(names = "--lease-namespace", defaultValue = "kube-system", order = 1,
            description = "Default: ${DEFAULT-VALUE}.")
    String leaseNamespace;

    @Option(names = "--lease-label-selector", defaultValue = "k8s-app=konnectivity-server", order = 1,
            description = "Default: ${DEFAULT-VALUE}.")
    String leaseLabelSelector;

    @Option(names = "--health-server-host", defaultValue = "", order = 1,
            description = "Health server address (empty: all interfaces).")
    String healthServerHost;

    @Option(names = "--health-server-port", defaultValue = "8093", order = 1,
            description = "/healthz, /readyz, /metrics (Kamaji: 8134). Default: ${DEFAULT-VALUE}.")
    int healthServerPort;

    @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", order = 1,
            description = "Admin server address. Default: ${DEFAULT-VALUE}.")
    String adminBindAddress;

    @Option(names = "--admin-server-port", defaultValue = "8094", order = 1,
            description = "Admin server (/debug/*, /ui) port (Kamaji: 8133). Default: ${DEFAULT-VALUE}.")
    int adminServerPort;

    @Option(names = "--kubeconfig", order = 1, description = "Kubeconfig file (default: in-cluster).")
    Path kubeconfig;

    @Option(names = {"-v", "--v"}, defaultValue = "0", order = 1,
            description = "klog verbosity: 0-3 INFO, 4-8 DEBUG, 9+ TRACE.")
    int verbosity;

    @Option(names = "--logtostderr", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 1,
            description = "Accepted for klog compatibility; logs always go to stderr.")
    boolean logToStderr;

    @Option(names = "--alsologtostderr", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "Accepted for klog compatibility.")
    boolean alsoLogToStderr;

    // --- tenant-gateway flags ------------------------------------------------------------------------------------

    @Option(names = "--config", order = 2, paramLabel = "FILE",
            description = "YAML file with any of these flags as keys (without dashes); command-line flags win.")
    Path configFile;

    @Option(names = "--log-format", defaultValue = "text", order = 2, description = "text or json.")
    String logFormat;

    @Option(names = "--node-name", defaultValue = "${env:NODE_NAME}", order = 2,
            description = "This node (default: env NODE_NAME). Needed by device registration and the lock controller.")
    String nodeName;

    @Option(names = "--shutdown-grace", defaultValue = "25s", order = 2,
            description = "After the first SIGTERM: drain, then exit within this. Default: ${DEFAULT-VALUE}.")
    String shutdownGrace;

    @Option(names = "--dial-allow", split = ",", order = 2, paramLabel = "RULE",
            description = "Allowed dial targets: CIDR, host name (*.svc patterns), optionally :port or :lo-hi.")
    List<String> dialAllow = new ArrayList<>();

    @Option(names = "--dial-deny", split = ",", order = 2, paramLabel = "RULE",
            description = "Denied dial targets (deny wins over allow).")
    List<String> dialDeny = new ArrayList<>();

    @Option(names = "--dial-timeout", defaultValue = "5s", order = 2,
            description = "Timeout of one dial to a target. Default: ${DEFAULT-VALUE}.")
    String dialTimeout;

    @Option(names = "--flow-control", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 2,
            description = "Offer per-tunnel flow control to servers that support it. Default: ${DEFAULT-VALUE}.")
    boolean flowControl;

    @Option(names = "--enable-webhook", arity = "0..1", fallbackValue = "true", order = 3,
            description = "Serve the HAMi webhook (default: on when --webhook-tls-cert is given).")
    Boolean enableWebhook;

    @Option(names = "--webhook-listen", defaultValue = "0.0.0.0:9443", order = 3,
            description = "HOST:PORT or PORT of the webhook HTTPS server. Default: ${DEFAULT-VALUE}.")
    String webhookListen;

    @Option(names = "--webhook-tls-cert", order = 3, description = "Webhook serving certificate (reloaded on change).")
    Path webhookTlsCert;

    @Option(names = "--webhook-tls-key", order = 3, description = "Key of --webhook-tls-cert.")
    Path webhookTlsKey;

    @Option(names = "--webhook-tls-secret", order = 3, paramLabel = "NAMESPACE/NAME",
            description = "Read tls.crt/tls.key (and ca.crt) from this Secret through the API instead of files"
                    + " (for Kamaji's DaemonSet, which cannot mount volumes).")
    String webhookTlsSecret;

    @Option(names = "--webhook-client-ca", order = 3,
            description = "Require callers (kube-apiserver) to present a certificate from this CA.")
    Path webhookClientCa;

    @Option(names = "--device-config", order = 3, paramLabel = "FILE",
            description = "HAMi's device-config.yaml (ConfigMap hami-scheduler-device); HAMi's defaults otherwise.")
    Path deviceConfig;

    @Option(names = "--scheduler-name", defaultValue = "hami-scheduler", order = 3,
            description = "Scheduler GPU pods are sent to. Default: ${DEFAULT-VALUE}.")
    String schedulerName;

    @Option(names = "--force-overwrite-default-scheduler", arity = "0..1", defaultValue = "true",
            fallbackValue = "true", order = 3,
            description = "Replace schedulerName default-scheduler on GPU pods. Default: ${DEFAULT-VALUE}.")
    boolean forceOverwriteDefaultScheduler;

    @Option(names = "--hami-compat", defaultValue = "v2.10", order = 3,
            description = "HAMi behaviour to match: v2.10 or v2.9. Default: ${DEFAULT-VALUE}.")
    String hamiCompat;

    @Option(names = "--upstream", order = 3, paramLabel = "URL",
            description = "Forward admissions to this HTTPS webhook (e.g. the real hami-scheduler).")
    String upstream;

    @Option(names = "--upstream-ca", order = 3, description = "CA of --upstream.")
    Path upstreamCa;

    @Option(names = "--upstream-timeout", defaultValue = "9s", order = 3, description = "Default: ${DEFAULT-VALUE}.")
    String upstreamTimeout;

    @Option(names = "--upstream-failure-policy", defaultValue = "fail-closed", order = 3,
            description = "fail-closed, fail-open or fallback. Default: ${DEFAULT-VALUE}.")
    String upstreamFailurePolicy;

    @Option(names = "--manage-webhook-config", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 3, description = "Keep the CA bundle of the MutatingWebhookConfiguration up to date.")
    boolean manageWebhookConfig;

    @Option(names = "--webhook-config-name", defaultValue = DEFAULT_WEBHOOK_CONFIG_NAME, order = 3,
            description = "MutatingWebhookConfiguration managed with --manage-webhook-config. Default: ${DEFAULT-VALUE}.")
    String webhookConfigName;

    @Option(names = "--webhook-ca-bundle", order = 3, paramLabel = "FILE",
            description = "CA written into the webhook configuration (default: --webhook-client-ca or the last"
                    + " certificate of --webhook-tls-cert).")
    Path webhookCaBundle;

    @Option(names = "--device-source", defaultValue = "none", order = 4,
            description = "mock, nvidia-smi or none (no registration). Default: ${DEFAULT-VALUE}.")
    String deviceSource;

    @Option(names = "--mock-inventory", order = 4, paramLabel = "FILE", description = "Simulated GPUs (YAML/JSON).")
    Path mockInventory;

    @Option(names = "--mock-gpus", order = 4, paramLabel = "PRESET[:N],…",
            description = "Simulated GPUs, e.g. A100-80GB or L4-24GB:2.")
    String mockGpus;

    @Option(names = "--nvidia-smi-path", defaultValue = "/usr/bin/nvidia-smi", order = 4,
            description = "Default: ${DEFAULT-VALUE}.")
    Path nvidiaSmiPath;

    @Option(names = "--device-split-count", defaultValue = "10", order = 4,
            description = "Pods per GPU (HAMi deviceSplitCount). Default: ${DEFAULT-VALUE}.")
    int deviceSplitCount;

    @Option(names = "--handshake-interval", defaultValue = "20s", order = 4,
            description = "hami.io/node-handshake refresh (< 60s). Default: ${DEFAULT-VALUE}.")
    String handshakeInterval;

    @Option(names = "--advertise-gpu-capacity", arity = "0..1", fallbackValue = "true", order = 4,
            description = "Patch nvidia.com/gpu capacity (default: on for mock, off otherwise).")
    Boolean advertiseGpuCapacity;

    @Option(names = "--deregister-on-exit", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 4,
            description = "Remove the registration when the agent stops.")
    boolean deregisterOnExit;

    @Option(names = "--enable-lock-controller", arity = "0..1", fallbackValue = "true", order = 5,
            description = "Run the allocation/node-lock controller (default: on when devices are registered).")
    Boolean enableLockController;

    @Option(names = "--allocation-mode", order = 5,
            description = "complete or observe (default: complete for mock, observe for nvidia-smi).")
    String allocationMode;

    @Option(names = "--node-lock-timeout", defaultValue = "5m", order = 5,
            description = "HAMi node-lock expiry (keep equal to the scheduler's). Default: ${DEFAULT-VALUE}.")
    String nodeLockTimeout;

    @Option(names = "--pod-field-selector", arity = "0..1", defaultValue = "true", fallbackValue = "true",
            hidden = true, order = 5,
            description = "Send spec.nodeName=<node> with the lock controller's pod watch. Off only against fabric8's"
                    + " CRUD mock API server (the lab), which matches nothing with it; pods are filtered client-side"
                    + " anyway.")
    boolean podFieldSelector;

    @Unmatched
    List<String> unmatched = new ArrayList<>();

    private boolean needsNodeName() {
        return !"none".equals(deviceSource) || Boolean.TRUE.equals(enableLockController);
    }

    /** The validated configuration these flags describe (also how {@code lab} builds its agents' real wiring). */
    public AgentConfig toConfig() {
        return AgentConfigMapper.map(this);
    }

    /**
     * Parses {@code args} exactly as {@code run} does ({@code --config FILE} applied as defaults, unknown flags
     * collected in {@link #unknownFlags()}) without running anything: for commands that take the same flags as
     * {@code run} ({@code doctor}).
     *
     * @throws picocli.CommandLine.ParameterException when a flag is malformed
     * @throws IllegalArgumentException when the {@code --config} file is unreadable or has unknown keys
     */
    public static AgentCommand parse(String... args) {
        AgentCommand command = new AgentCommand();
        CommandLine commandLine = new CommandLine(command);
        ConfigFileDefaults.install(commandLine, args);
        commandLine.parseArgs(args);
        return command;
    }

    /** Flags this version does not know; {@code run} warns about them and carries on. */
    public List<String> unknownFlags() {
        return List.copyOf(unmatched);
    }

    /**
     * {@link #toConfig()}, after finding the node name through the API when a part needs one and neither
     * {@code --node-name} nor {@code NODE_NAME} gave it (Kamaji's DaemonSet has no downward-API env).
     */
    public AgentConfig resolveConfig() {
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            nodeName = io.tenantgateway.agent.k8s.NodeNames.discover(kubeconfig);
        }
        return toConfig();
    }

    @Override
    public Integer call() {
        LogSetup.configure(LogSetup.Format.parse(logFormat), verbosity);
        if (!unmatched.isEmpty()) {
            // Kamaji and older manifests may pass flags of other konnectivity-agent versions: warn, don't die.
            log.warn("ignoring unknown flags {} (see tenant-gateway run --help)", unmatched);
        }
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            // Kamaji's DaemonSet sets no NODE_NAME: the agent reads it from its pod through the API, in the
            // background, so the tunnel does not wait for the API. The flags are checked now, with a placeholder.
            io.tenantgateway.agent.k8s.NodeNames.PodIdentity pod = io.tenantgateway.agent.k8s.NodeNames.podIdentity();
            nodeName = PENDING_NODE_NAME;
            AgentConfig provisional = toConfig();
            nodeName = null;
            return AgentRunner.run(provisional, () -> {
                String discovered = io.tenantgateway.agent.k8s.NodeNames.discover(kubeconfig, pod);
                synchronized (this) {
                    nodeName = discovered;
                    return toConfig();
                }
            }, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
        }
        AgentConfig config = toConfig();
        return AgentRunner.run(config, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
    }
}
