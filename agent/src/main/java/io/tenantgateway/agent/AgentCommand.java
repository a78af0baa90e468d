package io.tenantgateway.agent;

import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.cli.GoFlags;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.agent.logging.LogSetup;
import io.tenantgateway.agent.webhook.WebhookCertificatesConfig;
import io.tenantgateway.tunnel.TunnelConfig;
import java.nio.file.Path;
import java.time.Duration;
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

/**
 * {@code tenant-gateway run}: the agent. Accepts every {@code konnectivity-agent} flag with the upstream default
 * (so Kamaji's fixed argument list works unchanged) plus tenant-gateway's own flags. Flags map onto
 * {@link AgentConfig} once, here; nothing else reads them.
 *
 * <p>Every flag can also come from {@code --config FILE} (YAML, keys are the flag names without dashes); a flag on
 * the command line wins over the file.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Version.class,
        sortOptions = false, usageHelpWidth = 120,
        description = {"Run the agent: a drop-in konnectivity-agent, plus (when enabled) the HAMi webhook, GPU",
            "device registration and the node-lock controller.",
            "With only konnectivity-agent flags it is a pure konnectivity-agent."})
public final class AgentCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(AgentCommand.class);
    /** Name of the MutatingWebhookConfiguration in manifests/base. */
    public static final String DEFAULT_WEBHOOK_CONFIG_NAME = io.tenantgateway.agent.webhook.WebhookPart.DEFAULT_CONFIG_NAME;
    /** Where HAMi's chart puts its device configuration. */
    public static final String DEFAULT_DEVICE_CONFIG_MAP = "kube-system/hami-scheduler-device";
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

    @Option(names = "--alpn-proto", split = ",", order = 1,
            description = "ALPN protocols to offer; h2 is added when missing, as grpc-go does.")
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
            description = "gRPC keepalive interval; below 30s warns (konnectivity-server answers pings more often"
                    + " than every 30s with GOAWAY too_many_pings). Default: ${DEFAULT-VALUE}.")
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

    @Option(names = {"-v", "--v"}, defaultValue = "4", order = 1,
            description = "klog verbosity: upstream's messages at upstream's levels (2 connect, 3 dial, 4 close);"
                    + " 5-8 add per-connection detail, 9+ per-packet lines and library debug. Default: ${DEFAULT-VALUE}.")
    int verbosity;

    @Option(names = "--logtostderr", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 1,
            description = "klog: log to stderr only (true) or to --log-file (false). Default: ${DEFAULT-VALUE}.")
    boolean logToStderr;

    @Option(names = "--alsologtostderr", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "klog: with --logtostderr=false, log to stderr as well as to the file.")
    boolean alsoLogToStderr;

    @Option(names = "--log-file", defaultValue = "", order = 1, paramLabel = "FILE",
            description = "klog: log to this file (no effect when --logtostderr=true).")
    String logFile;

    @Option(names = "--log-file-max-size", defaultValue = "1800", order = 1, paramLabel = "MB",
            description = "klog: start a new --log-file at this size, keeping the old one as FILE.1; 0: no limit."
                    + " Default: ${DEFAULT-VALUE}.")
    long logFileMaxSize;

    @Option(names = "--stderrthreshold", defaultValue = "2", order = 1, paramLabel = "SEVERITY",
            description = "klog (INFO, WARNING, ERROR, FATAL or 0-3): with --logtostderr=false, lines at or above"
                    + " this also go to stderr. Default: ${DEFAULT-VALUE}.")
    String stderrThreshold;

    @Option(names = "--skip-headers", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "klog: leave the header (severity, time, pid, file:line) out of text lines.")
    boolean skipHeaders;

    @Option(names = "--vmodule", defaultValue = "", order = 1, paramLabel = "PATTERN=N,…",
            description = "klog: per-file verbosity, e.g. TunnelClient=9,Endpoint*=6 (class file names without"
                    + " .java; a pattern with '.' matches the class name).")
    String vmodule;

    // --- konnectivity-agent and klog flags accepted but not implemented yet: a value other than the default logs
    // one WARN naming the flag (see warnings()); the default is what this agent does anyway. -------------------

    @Option(names = "--enable-profiling", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "Serve profiling on the admin port (upstream: pprof): /debug/threads, /debug/heap-histogram,"
                    + " /debug/jfr?seconds=N.")
    boolean enableProfiling;

    @Option(names = "--enable-contention-profiling", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 1, description = "With --enable-profiling: record lock contention (JFR monitor and park events"
                    + " of 1 ms or more) in /debug/jfr recordings (upstream: block profiling).")
    boolean enableContentionProfiling;

    // --- konnectivity-agent and klog flags accepted but not implemented yet: a value other than the default logs
    // one WARN naming the flag (see warnings()); the default is what this agent does anyway. -------------------

    @Option(names = "--warn-on-channel-limit", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 1, description = "Not implemented yet (upstream: log when a tunnel's channel is full); accepted"
                    + " with a warning.")
    boolean warnOnChannelLimit;

    @Option(names = "--server-count-source", defaultValue = "default", hidden = true, order = 1,
            description = "Upstream HEAD: default or max. Only default is implemented; max is accepted with a"
                    + " warning.")
    String serverCountSource;

    @Option(names = "--kube-api-content-type", defaultValue = "application/vnd.kubernetes.protobuf", hidden = true,
            order = 1, description = "Upstream HEAD; accepted with a warning (the API client speaks JSON).")
    String kubeApiContentType;

    @Option(names = "--lease-label", defaultValue = "k8s-app=konnectivity-server", hidden = true, order = 1,
            description = "Upstream HEAD; not implemented yet (use --lease-label-selector); accepted with a warning.")
    String leaseLabel;

    @Option(names = "--log-dir", defaultValue = "", order = 1, paramLabel = "DIR",
            description = "klog; not implemented yet; accepted with a warning.")
    String logDir;

    @Option(names = "--skip-log-headers", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "klog; not implemented yet; accepted with a warning.")
    boolean skipLogHeaders;

    @Option(names = "--add-dir-header", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "klog; not implemented yet; accepted with a warning.")
    boolean addDirHeader;

    @Option(names = "--one-output", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            description = "klog; not implemented yet; accepted with a warning.")
    boolean oneOutput;

    @Option(names = "--log-backtrace-at", defaultValue = ":0", order = 1, paramLabel = "FILE:LINE",
            description = "klog; not implemented yet; accepted with a warning.")
    String logBacktraceAt;

    @Option(names = "--log-flush-frequency", defaultValue = "5s", order = 1, paramLabel = "DURATION",
            description = "klog; not implemented yet (logs are not buffered); accepted with a warning.")
    String logFlushFrequency;

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
            description = "Dial targets to allow: CIDR or IP, host name (*.svc patterns), port:N or port:N-M."
                    + " Loopback, localhost and link-local (169.254.0.0/16, fe80::/10) are denied by default: an"
                    + " entry inside them opens just that part; any other entry makes an allow list."
                    + " 0.0.0.0/0,::/0 allows every target, as upstream. The agent's admin port is never dialled.")
    List<String> dialAllow = new ArrayList<>();

    @Option(names = "--dial-deny", split = ",", order = 2, paramLabel = "RULE",
            description = "Dial targets to deny, same forms (deny wins over allow).")
    List<String> dialDeny = new ArrayList<>();

    @Option(names = "--dial-timeout", defaultValue = "5s", order = 2,
            description = "Timeout of one dial to a target. Default: ${DEFAULT-VALUE}.")
    String dialTimeout;

    @Option(names = "--max-dials-in-flight", defaultValue = "256", order = 2,
            description = "Dials one server connection runs at once; more get a DIAL_RSP error at once (bounds what a"
                    + " dial flood costs in sockets and memory). Default: ${DEFAULT-VALUE}.")
    int maxDialsInFlight;

    @Option(names = "--flow-control", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 2,
            description = "Offer per-tunnel flow control to servers that support it. Default: ${DEFAULT-VALUE}.")
    boolean flowControl;

    @Option(names = "--enable-webhook", arity = "0..1", fallbackValue = "true", order = 3,
            description = "Serve the HAMi webhook (default: on when --webhook-tls-cert is given).")
    Boolean enableWebhook;

    @Option(names = "--webhook-listen", defaultValue = "0.0.0.0:9443", order = 3,
            description = "HOST:PORT or PORT of the webhook HTTPS server. Default: ${DEFAULT-VALUE}.")
    String webhookListen;

    @Option(names = "--webhook-max-connections", defaultValue = "1024", order = 3,
            description = "Connections the webhook serves at once; more are closed as they arrive (requests must"
                    + " arrive in full within 10s, idle connections close after 60s). Default: ${DEFAULT-VALUE}.")
    int webhookMaxConnections;

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

    @Option(names = "--device-config-map", defaultValue = DEFAULT_DEVICE_CONFIG_MAP, order = 3,
            paramLabel = "NAMESPACE/NAME",
            description = "HAMi's device ConfigMap (key device-config.yaml), watched through the API; changes apply"
                    + " live. --device-config wins; \"\" turns the watch off. Default: ${DEFAULT-VALUE}.")
    String deviceConfigMap;

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

    // --- self-managed webhook certificates (io.tenantgateway.agent.webhook) ---

    @Option(names = "--webhook-tls-self-managed", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 3, description = "Create a CA and serving certificate in --webhook-tls-secret when it is missing,"
                    + " and renew them before they expire; every agent serves the Secret's certificate.")
    boolean webhookTlsSelfManaged;

    @Option(names = "--webhook-service", defaultValue = WebhookCertificatesConfig.DEFAULT_SERVICE, order = 3,
            paramLabel = "NAMESPACE/NAME", description = "Service kube-apiserver calls the webhook through: the"
                    + " self-managed certificate is for its DNS names. Default: ${DEFAULT-VALUE}.")
    String webhookService;

    @Option(names = "--webhook-tls-validity", defaultValue = WebhookCertificatesConfig.DEFAULT_VALIDITY, order = 3,
            description = "Validity of a self-managed serving certificate. Default: ${DEFAULT-VALUE}.")
    String webhookTlsValidity;

    @Option(names = "--webhook-tls-renew-before", defaultValue = WebhookCertificatesConfig.DEFAULT_RENEW_BEFORE,
            order = 3, description = "Renew the self-managed serving certificate once less than this is left."
                    + " Default: ${DEFAULT-VALUE}.")
    String webhookTlsRenewBefore;

    @Option(names = "--webhook-ca-validity", defaultValue = WebhookCertificatesConfig.DEFAULT_CA_VALIDITY, order = 3,
            description = "Validity of a self-managed CA; it is replaced once less than one --webhook-tls-validity is"
                    + " left. Default: ${DEFAULT-VALUE}.")
    String webhookCaValidity;

    @Option(names = "--webhook-ca-overlap", defaultValue = WebhookCertificatesConfig.DEFAULT_CA_OVERLAP, order = 3,
            hidden = true, description = "How long a new self-managed CA is published next to the old one before it"
                    + " signs the served certificate. Default: ${DEFAULT-VALUE}.")
    String webhookCaOverlap;

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

    @Option(names = "--device-split-count", order = 4,
            description = "Pods per GPU (HAMi deviceSplitCount; default: --device-config's, else 10).")
    Integer deviceSplitCount;

    @Option(names = "--handshake-interval", defaultValue = "20s", order = 4,
            description = "hami.io/node-handshake refresh (< 60s). Default: ${DEFAULT-VALUE}.")
    String handshakeInterval;

    @Option(names = "--advertise-gpu-capacity", arity = "0..1", fallbackValue = "true", order = 4,
            description = "Patch nvidia.com/gpu capacity (default: on for mock, off otherwise).")
    Boolean advertiseGpuCapacity;

    @Option(names = "--deregister-on-exit", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 4,
            description = "Remove the registration when the agent stops.")
    boolean deregisterOnExit;

    @Option(names = "--device-plugin", defaultValue = "off", order = 4, paramLabel = "on|off",
            description = "Serve kubelet's device plugin API for the registered GPUs (HAMi's nvidia-<resource>.sock):"
                    + " kubelet learns nvidia.com/gpu, and Allocate completes HAMi's allocation (HAMi-core env and"
                    + " mounts, bind-phase, node lock). Needs --device-source. Default: ${DEFAULT-VALUE}.")
    String devicePlugin;

    @Option(names = "--device-plugin-dir", defaultValue = "/var/lib/kubelet/device-plugins", order = 4,
            paramLabel = "DIR", description = "kubelet's device plugin directory (kubelet.sock). Default:"
                    + " ${DEFAULT-VALUE}.")
    Path devicePluginDir;

    @Option(names = "--device-plugin-numa-topology", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 4, description = "Give every listed device its GPU's NUMA node (HAMi's enableNumaTopology).")
    boolean devicePluginNumaTopology;

    @Option(names = "--device-plugin-host-root", defaultValue = "/", hidden = true, order = 4, paramLabel = "DIR",
            description = "Where the host's /usr/local/vgpu and /tmp/vgpulock are seen from the agent (the"
                    + " DaemonSet mounts them at their host paths); the lab uses its work directory.")
    Path devicePluginHostRoot;

    @Option(names = "--enable-lock-controller", arity = "0..1", fallbackValue = "true", order = 5,
            description = "Run the allocation/node-lock controller (default: on when devices are registered).")
    Boolean enableLockController;

    @Option(names = "--allocation-mode", order = 5,
            description = "device-plugin or observe: who completes HAMi allocations here (default: device-plugin with"
                    + " --device-plugin=on, observe otherwise).")
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

    private boolean needsNodeName() {
        return !"none".equals(deviceSource) || Boolean.TRUE.equals(enableLockController);
    }

    /** The validated configuration these flags describe (also how {@code lab} builds its agents' real wiring). */
    public AgentConfig toConfig() {
        return AgentConfigMapper.map(this);
    }

    /**
     * Parses {@code args} exactly as {@code run} does ({@code --config FILE} applied as defaults, Go's single-dash
     * long forms accepted, unknown flags rejected) without running anything: for commands that take the same flags
     * as {@code run} ({@code doctor}).
     *
     * @throws picocli.CommandLine.ParameterException when a flag is unknown or malformed ({@link GoFlags#message}
     *     gives the one-line text)
     * @throws IllegalArgumentException when the {@code --config} file is unreadable or has unknown keys
     */
    public static AgentCommand parse(String... args) {
        AgentCommand command = new AgentCommand();
        CommandLine commandLine = goParsing(new CommandLine(command));
        String[] normalized = GoFlags.normalize(commandLine.getCommandSpec(), args);
        ConfigFileDefaults.install(commandLine, normalized);
        commandLine.parseArgs(normalized);
        return command;
    }

    /**
     * pflag's rules on a {@code run} command line: a repeated flag overrides the earlier one (Kamaji appends the
     * agent's {@code extraArgs} after its fixed list, to override it); list flags collect every value.
     */
    public static CommandLine goParsing(CommandLine commandLine) {
        return commandLine.setOverwrittenOptionsAllowed(true);
    }

    /**
     * What {@code run} warns about at start, one line each: every upstream flag this version accepts but does not
     * implement yet, when it is set to something other than upstream's default (flag or {@code --config}), and a
     * {@code --keepalive-time} below konnectivity-server's 30 s ping limit.
     */
    public List<String> warnings() {
        List<String> out = new ArrayList<>();
        if (enableContentionProfiling && !enableProfiling) {
            out.add("--enable-contention-profiling=true: no effect without --enable-profiling");
        }
        notImplemented(out, "--warn-on-channel-limit", warnOnChannelLimit, !warnOnChannelLimit);
        notImplemented(out, "--server-count-source", serverCountSource,
                serverCountSource.isEmpty() || serverCountSource.equals("default"));
        notImplemented(out, "--kube-api-content-type", kubeApiContentType,
                kubeApiContentType.equals("application/vnd.kubernetes.protobuf"));
        notImplemented(out, "--lease-label", leaseLabel, leaseLabel.equals("k8s-app=konnectivity-server"));
        notImplemented(out, "--log-dir", logDir, logDir.isEmpty());
        notImplemented(out, "--skip-log-headers", skipLogHeaders, !skipLogHeaders);
        notImplemented(out, "--add-dir-header", addDirHeader, !addDirHeader);
        notImplemented(out, "--one-output", oneOutput, !oneOutput);
        notImplemented(out, "--log-backtrace-at", logBacktraceAt,
                logBacktraceAt.isEmpty() || logBacktraceAt.equals(":0"));
        notImplemented(out, "--log-flush-frequency", logFlushFrequency,
                GoDuration.parse("--log-flush-frequency", logFlushFrequency).equals(Duration.ofSeconds(5)));
        if (!logFile.isEmpty() && logToStderr) {
            out.add("--log-file=" + logFile + ": no effect while --logtostderr=true (as klog); add"
                    + " --logtostderr=false to write it");
        }
        if (!logToStderr && logFile.isEmpty()) {
            out.add("--logtostderr=false without --log-file: logging to stderr (klog would write files in the"
                    + " temporary directory)");
        }
        if (webhookTlsSelfManaged && !manageWebhookConfig) {
            out.add("--webhook-tls-self-managed=true without --manage-webhook-config: write the Secret's ca.crt into"
                    + " the webhook configuration's caBundle yourself, and again after each CA rotation");
        }
        Duration keepalive = GoDuration.parse("--keepalive-time", keepaliveTime);
        if (!keepalive.isNegative() && !keepalive.isZero()
                && keepalive.compareTo(TunnelConfig.MIN_KEEPALIVE_TIME) < 0) {
            out.add("--keepalive-time=" + keepaliveTime + ": below 30s; konnectivity-server answers pings more often"
                    + " than every 30s with GOAWAY too_many_pings and closes the connection");
        }
        return out;
    }

    private static void notImplemented(List<String> out, String flag, Object value, boolean upstreamDefault) {
        if (!upstreamDefault) {
            out.add(flag + "=" + value + ": accepted, not implemented yet (no effect)");
        }
    }

    /** The logging flags, checked. */
    public LogSetup.Options logOptions() {
        if (logFileMaxSize < 0) {
            throw new IllegalArgumentException("--log-file-max-size: " + logFileMaxSize + " (expected: >= 0)");
        }
        return new LogSetup.Options(LogSetup.Format.parse(logFormat), verbosity, vmodule, logFile,
                Math.multiplyExact(logFileMaxSize, LogSetup.Options.MB), logToStderr, alsoLogToStderr,
                AgentConfigMapper.severity(stderrThreshold), skipHeaders);
    }

    /**
     * {@link #toConfig()}, after finding the node name through the API when a part needs one and neither
     * {@code --node-name} nor {@code NODE_NAME} gave it (Kamaji's DaemonSet has no downward-API env).
     */
    public AgentConfig resolveConfig() {
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            nodeName = io.tenantgateway.agent.node.NodeNames.discover(kubeconfig);
        }
        return toConfig();
    }

    @Override
    public Integer call() {
        LogSetup.configure(logOptions());
        for (String warning : warnings()) {
            log.warn(warning); // a loop, not forEach(log::warn): the caller in the log line is this file
        }
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            // Kamaji's DaemonSet sets no NODE_NAME: the agent reads it from its pod through the API, in the
            // background, so the tunnel does not wait for the API. The flags are checked now, once, with a
            // placeholder that only the parts' own configs carry until the name is known (the agent's config has no
            // node name: NodeIdentity tells it, and the parts get it through AgentConfig.forNode).
            io.tenantgateway.agent.node.NodeNames.PodIdentity pod = io.tenantgateway.agent.node.NodeNames.podIdentity();
            nodeName = PENDING_NODE_NAME;
            AgentConfig provisional = toConfig();
            nodeName = null;
            Path api = kubeconfig;
            io.tenantgateway.agent.node.NodeIdentity node = io.tenantgateway.agent.node.NodeIdentity.fromPod(pod,
                    () -> io.tenantgateway.agent.node.NodeNames.discover(api, pod));
            return AgentRunner.run(provisional, node, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
        }
        AgentConfig config = toConfig();
        return AgentRunner.run(config, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
    }
}
