package io.tenantgateway.agent.cli;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.config.ConfigFiles;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code run}'s konnectivity-agent flags (upstream's names and defaults, like ANP's {@code options} struct) and
 * tenant-gateway's tunnel flags: the tunnel ({@link TunnelConfig}), the health and admin servers and the API client
 * ({@code AgentConfig.Servers}, through {@link #servers}), profiling, and the upstream flags accepted but not
 * implemented yet, which warn ({@link #warnings()}). A picocli mixin of {@code run}.
 *
 * <p>The agent's root package uses this one, so this one makes {@code AgentConfig}'s nested records through the
 * constructor it is given ({@code AgentConfig.Servers::new}) instead of importing them: the packages stay free of
 * cycles.
 *
 * <p>{@code --tunnel=false} turns the tunnel off (the node role): {@link #tunnel} is then empty, and a flag that only
 * the tunnel reads ({@link #TUNNEL_ONLY}), given on the command line or in {@code --config}, is an error naming it;
 * the servers, the API client, profiling and {@code --agent-id} ({@link #SHARED}) stay.
 */
public final class TunnelFlags {
    /**
     * The flags only the tunnel reads: each is refused with {@code --tunnel=false}, where it would do nothing (a
     * DaemonSet that keeps them most likely meant to keep its tunnel).
     */
    public static final List<String> TUNNEL_ONLY = List.of("--proxy-server-host", "--proxy-server-port", "--ca-cert",
            "--agent-cert", "--agent-key", "--alpn-proto", "--service-account-token-path", "--agent-identifiers",
            "--sync-interval", "--sync-interval-cap", "--probe-interval", "--sync-forever", "--keepalive-time",
            "--xfr-channel-size", "--count-server-leases", "--lease-namespace", "--lease-label-selector",
            "--warn-on-channel-limit", "--server-count-source", "--lease-label", "--dial-allow", "--dial-deny",
            "--dial-timeout", "--max-dials-in-flight", "--stuck-target-timeout", "--flow-control");
    /**
     * This mixin's other flags, which mean the same with the tunnel off: the health and admin servers, the API
     * client, profiling, the agent's id (its Events and status page) and {@code --tunnel} itself.
     */
    public static final List<String> SHARED = List.of("--tunnel", "--agent-id", "--health-server-host",
            "--health-server-port", "--admin-bind-address", "--admin-server-port", "--kubeconfig", "--enable-profiling",
            "--enable-contention-profiling", "--kube-api-content-type");

    /** The command this is mixed into: what was given ({@link #given}). */
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    // --- tenant-gateway: the tunnel on or off (order 2: tenant-gateway's section of run's --help) ---------------

    @Option(names = "--tunnel", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 2,
            paramLabel = "true|false",
            description = "Run the tunnel to konnectivity-server. false: the node role, the HAMi parts turned on"
                    + " (at least one) without a tunnel: no konnectivity-server flags (giving one exits 2),"
                    + " readiness without server-connected. Default: ${DEFAULT-VALUE}.")
    boolean tunnelOn;
    // --- konnectivity-agent flags (same names and defaults as upstream); order 1: their section of run's --help ---

    @Option(names = "--proxy-server-host", defaultValue = "127.0.0.1", order = 1, paramLabel = "HOST",
            description = "konnectivity-server address (the load balancer of all replicas); also the TLS name."
                    + " Default: ${DEFAULT-VALUE}.")
    String proxyServerHost;

    @Option(names = "--proxy-server-port", defaultValue = "8091", order = 1, paramLabel = "PORT",
            description = "konnectivity-server agent port (Kamaji: 8132). Default: ${DEFAULT-VALUE}.")
    int proxyServerPort;

    @Option(names = "--ca-cert", order = 1, paramLabel = "FILE", description = "CA the server certificate must chain"
            + " to, reloaded on change (Kamaji: the service account's ca.crt). Required: no default.")
    Path caCert;

    @Option(names = "--agent-cert", order = 1, paramLabel = "FILE",
            description = "Client certificate for mTLS to the server, with --agent-key. Default: none.")
    Path agentCert;

    @Option(names = "--agent-key", order = 1, paramLabel = "FILE", description = "Key of --agent-cert. Default: none.")
    Path agentKey;

    @Option(names = "--alpn-proto", split = ",", order = 1, paramLabel = "PROTO",
            description = "ALPN protocols to offer; h2 is added when missing, as grpc-go does. Default: none (h2).")
    List<String> alpnProtos = new ArrayList<>();

    @Option(names = "--service-account-token-path", order = 1, paramLabel = "FILE",
            description = "Bearer token file sent as 'authorization'; re-read on every connection attempt. Default:"
                    + " none (no token).")
    Path serviceAccountTokenPath;

    @Option(names = "--agent-id", defaultValue = "${env:PROXY_AGENT_ID}", order = 1, paramLabel = "ID",
            description = "This agent's id at the server. Default: env PROXY_AGENT_ID, else a random UUID.")
    String agentId;

    @Option(names = "--agent-identifiers", defaultValue = "", order = 1, paramLabel = "QUERY",
            description = "host=..&ipv4=..&ipv6=..&cidr=..&default-route=true for the server's proxy strategies."
                    + " Default: none.")
    String agentIdentifiers;

    @Option(names = "--sync-interval", defaultValue = "1s", order = 1, paramLabel = "DURATION",
            description = "Pause between connection attempts while fewer than the server count are connected; after"
                    + " an error it grows 1.5 times (plus up to 10 percent jitter) up to --sync-interval-cap."
                    + " Default: ${DEFAULT-VALUE}.")
    String syncInterval;

    @Option(names = "--sync-interval-cap", defaultValue = "10s", order = 1, paramLabel = "DURATION",
            description = "Longest pause between connection attempts after errors. Default: ${DEFAULT-VALUE}.")
    String syncIntervalCap;

    @Option(names = "--probe-interval", defaultValue = "1s", order = 1, paramLabel = "DURATION",
            description = "How often server connections are checked; one whose channel is not READY is dropped."
                    + " Default: ${DEFAULT-VALUE}.")
    String probeInterval;

    @Option(names = "--sync-forever", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            paramLabel = "true|false",
            description = "Keep connecting even when servercount connections exist. Default: ${DEFAULT-VALUE}.")
    boolean syncForever;

    @Option(names = "--keepalive-time", defaultValue = "1h", order = 1, paramLabel = "DURATION",
            description = "gRPC keepalive interval; below 30s warns (konnectivity-server answers pings more often"
                    + " than every 30s with GOAWAY too_many_pings). Default: ${DEFAULT-VALUE}.")
    String keepaliveTime;

    @Option(names = "--xfr-channel-size", defaultValue = "150", order = 1, paramLabel = "N",
            description = "Per-tunnel buffer in packets (against servers without flow control). Default: ${DEFAULT-VALUE}.")
    int xfrChannelSize;

    @Option(names = "--count-server-leases", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            paramLabel = "true|false",
            description = "Count valid konnectivity-server Leases as the server count. Default: ${DEFAULT-VALUE}.")
    boolean countServerLeases;

    @Option(names = "--lease-namespace", defaultValue = "kube-system", order = 1, paramLabel = "NAMESPACE",
            description = "Namespace of the Leases --count-server-leases counts. Default: ${DEFAULT-VALUE}.")
    String leaseNamespace;

    @Option(names = "--lease-label-selector", defaultValue = "k8s-app=konnectivity-server", order = 1,
            paramLabel = "SELECTOR",
            description = "Label selector of the Leases --count-server-leases counts. Default: ${DEFAULT-VALUE}.")
    String leaseLabelSelector;

    @Option(names = "--health-server-host", defaultValue = "", order = 1, paramLabel = "HOST",
            description = "Health server address. Default: \"\" (all interfaces).")
    String healthServerHost;

    @Option(names = "--health-server-port", defaultValue = "8093", order = 1, paramLabel = "PORT",
            description = "/healthz, /readyz, /metrics (Kamaji: 8134). Default: ${DEFAULT-VALUE}.")
    int healthServerPort;

    @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", order = 1, paramLabel = "HOST",
            description = "Admin server address. Default: ${DEFAULT-VALUE}.")
    String adminBindAddress;

    @Option(names = "--admin-server-port", defaultValue = "8094", order = 1, paramLabel = "PORT",
            description = "Admin server (/debug/*, /ui) port (Kamaji: 8133). Default: ${DEFAULT-VALUE}.")
    int adminServerPort;

    @Option(names = "--kubeconfig", order = 1, paramLabel = "FILE",
            description = "Kubeconfig file of the API client. Default: in-cluster (the pod's service account).")
    Path kubeconfig;

    @Option(names = "--enable-profiling", arity = "0..1", defaultValue = "false", fallbackValue = "true", order = 1,
            paramLabel = "true|false",
            description = "Serve profiling on the admin port (upstream: pprof): /debug/threads, /debug/heap-histogram,"
                    + " /debug/jfr?seconds=N. Default: ${DEFAULT-VALUE}.")
    boolean enableProfiling;

    @Option(names = "--enable-contention-profiling", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 1, paramLabel = "true|false",
            description = "With --enable-profiling: record lock contention (JFR monitor and park events of 1 ms or"
                    + " more) in /debug/jfr recordings (upstream: block profiling). Default: ${DEFAULT-VALUE}.")
    boolean enableContentionProfiling;

    // --- konnectivity-agent flags accepted but not implemented yet (order 6: their own section of --help): a value
    // other than the default logs one WARN naming the flag (see warnings()); the default is what this agent does
    // anyway. ------------------------------------------------------------------------------------------------------

    @Option(names = "--warn-on-channel-limit", arity = "0..1", defaultValue = "false", fallbackValue = "true",
            order = 6, paramLabel = "true|false",
            description = "Upstream: log when a tunnel's channel is full. Default: ${DEFAULT-VALUE}.")
    boolean warnOnChannelLimit;

    @Option(names = "--server-count-source", defaultValue = "default", hidden = true, order = 6,
            paramLabel = "default|max", description = "Upstream HEAD: default or max. Only default is implemented; max"
                    + " is accepted with a warning. Default: ${DEFAULT-VALUE}.")
    String serverCountSource;

    @Option(names = "--kube-api-content-type", defaultValue = "application/vnd.kubernetes.protobuf", hidden = true,
            order = 6, paramLabel = "TYPE", description = "Upstream HEAD; accepted with a warning (the API client"
                    + " speaks JSON). Default: ${DEFAULT-VALUE}.")
    String kubeApiContentType;

    @Option(names = "--lease-label", defaultValue = "k8s-app=konnectivity-server", hidden = true, order = 6,
            paramLabel = "SELECTOR", description = "Upstream HEAD; not implemented yet (use --lease-label-selector);"
                    + " accepted with a warning. Default: ${DEFAULT-VALUE}.")
    String leaseLabel;

    // --- tenant-gateway's tunnel flags (order 2) -----------------------------------------------------------------

    @Option(names = "--dial-allow", split = ",", order = 2, paramLabel = "RULE",
            description = "Dial targets to allow: CIDR or IP, host name (*.svc patterns), port:N or port:N-M."
                    + " Loopback, localhost and link-local (169.254.0.0/16, fe80::/10) are denied by default: an"
                    + " entry inside them opens just that part; any other entry makes an allow list."
                    + " 0.0.0.0/0,::/0 allows every target, as upstream. The agent's admin port is never dialled."
                    + " Default: none (every target but those).")
    List<String> dialAllow = new ArrayList<>();

    @Option(names = "--dial-deny", split = ",", order = 2, paramLabel = "RULE",
            description = "Dial targets to deny, same forms (deny wins over allow). Default: none.")
    List<String> dialDeny = new ArrayList<>();

    @Option(names = "--dial-timeout", defaultValue = "5s", order = 2, paramLabel = "DURATION",
            description = "Timeout of one dial to a target. Default: ${DEFAULT-VALUE}.")
    String dialTimeout;

    @Option(names = "--max-dials-in-flight", defaultValue = "256", order = 2, paramLabel = "N",
            description = "Dials one server connection runs at once; more get a DIAL_RSP error at once (bounds what a"
                    + " dial flood costs in sockets and memory). Default: ${DEFAULT-VALUE}.")
    int maxDialsInFlight;

    @Option(names = "--stuck-target-timeout", defaultValue = "30s", order = 2, paramLabel = "DURATION",
            description = "Close a tunnel whose target accepted nothing for this long while the server stream waited"
                    + " for it (its buffer full, or its bytes holding the target-buffer budget); the other tunnels"
                    + " then move again. 0: never (the stream waits, as upstream). Default: ${DEFAULT-VALUE}.")
    String stuckTargetTimeout;

    @Option(names = "--flow-control", arity = "0..1", defaultValue = "true", fallbackValue = "true", order = 2,
            paramLabel = "true|false",
            description = "Offer per-tunnel flow control to servers that support it. Default: ${DEFAULT-VALUE}.")
    boolean flowControl;

    /** {@code --kubeconfig} as given ({@code null}: in-cluster), unchecked: for reading the node name early. */
    public Path kubeconfig() {
        return kubeconfig;
    }

    /** {@code --enable-profiling}. */
    public boolean profiling() {
        return enableProfiling;
    }

    /** {@code --enable-contention-profiling}. */
    public boolean contentionProfiling() {
        return enableContentionProfiling;
    }

    /** This agent's id: {@code --agent-id} (or {@code PROXY_AGENT_ID}), else a new random UUID on each call. */
    public String agentId() {
        return agentId == null || agentId.isBlank() ? UUID.randomUUID().toString() : agentId.strip();
    }

    /**
     * The tunnel, checked, with {@code id} as its agent id ({@link #agentId()}, taken once); empty with
     * {@code --tunnel=false}, after checking that no flag only the tunnel reads was given.
     *
     * @throws ConfigException naming the first tunnel flag given with {@code --tunnel=false}, or a bad value
     */
    public Optional<TunnelConfig> tunnel(String id) {
        if (!tunnelOn) {
            for (String flag : TUNNEL_ONLY) {
                given(flag).ifPresent(value -> {
                    throw new ConfigException(flag, value, "not set with --tunnel=false: the tunnel is off; drop"
                            + " the flag, or drop --tunnel=false to run the tunnel");
                });
            }
            return Optional.empty();
        }
        // Accepted, not implemented: still upstream's syntax check, so what upstream refuses is refused here too.
        if (!List.of("", "default", "max").contains(serverCountSource)) {
            throw new ConfigException("--server-count-source", serverCountSource, "default or max");
        }
        return Optional.of(TunnelConfig.builder()
                .proxyServerHost(proxyServerHost)
                .proxyServerPort(proxyServerPort)
                .caCert(ConfigFiles.optional("--ca-cert", caCert))
                .agentCert(ConfigFiles.optional("--agent-cert", agentCert))
                .agentKey(ConfigFiles.optional("--agent-key", agentKey))
                .alpnProtos(alpnProtos)
                // The token file is re-read on every attempt and may appear later (projected volume): not checked here.
                .serviceAccountTokenPath(serviceAccountTokenPath)
                .agentId(id)
                .agentIdentifiers(AgentIdentifiers.parse(agentIdentifiers))
                .syncInterval(GoDuration.parse("--sync-interval", syncInterval))
                .syncIntervalCap(GoDuration.parse("--sync-interval-cap", syncIntervalCap))
                .probeInterval(GoDuration.parse("--probe-interval", probeInterval))
                .syncForever(syncForever)
                .keepaliveTime(GoDuration.parse("--keepalive-time", keepaliveTime))
                .xfrChannelSize(xfrChannelSize)
                .countServerLeases(countServerLeases)
                .leaseNamespace(leaseNamespace)
                .leaseLabelSelector(leaseLabelSelector)
                .dialTimeout(GoDuration.parse("--dial-timeout", dialTimeout))
                .dialPolicy(dialPolicy())
                .flowControl(flowControl)
                .maxDialsInFlight(maxDialsInFlight)
                .stuckTargetTimeout(GoDuration.parse("--stuck-target-timeout", stuckTargetTimeout))
                .build());
    }

    /**
     * The value of {@code flag} as given, on the command line (its last occurrence) or in {@code --config}; empty
     * when neither sets it (its default, an environment variable's value included). Empty too when this was not
     * parsed by picocli.
     */
    private Optional<String> given(String flag) {
        if (command == null) {
            return Optional.empty();
        }
        OptionSpec option = command.findOption(flag);
        CommandLine.ParseResult parsed = command.commandLine() == null ? null
                : command.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption(option)) {
            List<String> values = parsed.matchedOption(flag).originalStringValues();
            return Optional.of(values.isEmpty() ? "true" : values.get(values.size() - 1));
        }
        try {
            return command.defaultValueProvider() instanceof ConfigFileDefaults file
                    ? Optional.ofNullable(file.defaultValue(option)) : Optional.empty();
        } catch (Exception e) {
            throw new IllegalStateException(flag, e);
        }
    }

    /** The health and admin servers and the API client's kubeconfig, checked, made by {@code servers}. */
    public <S> S servers(Servers<S> servers) {
        return servers.of(healthServerHost, healthServerPort, adminBindAddress, adminServerPort,
                ConfigFiles.optional("--kubeconfig", kubeconfig));
    }

    /**
     * Makes the servers' settings ({@code AgentConfig.Servers::new}, whose constructor checks the ports).
     *
     * @param <S> what it makes
     */
    @FunctionalInterface
    public interface Servers<S> {
        /** @param kubeconfig checked to be a file; {@code null}: in-cluster */
        S of(String healthServerHost, int healthServerPort, String adminBindAddress, int adminServerPort,
                Path kubeconfig);
    }

    /**
     * What {@code run} warns about at start for these flags, one line each: an accepted flag not implemented yet set
     * to something other than upstream's default, contention profiling without profiling, and a
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
        Duration keepalive = GoDuration.parse("--keepalive-time", keepaliveTime);
        if (!keepalive.isNegative() && !keepalive.isZero()
                && keepalive.compareTo(TunnelConfig.MIN_KEEPALIVE_TIME) < 0) {
            out.add("--keepalive-time=" + keepaliveTime + ": below 30s; konnectivity-server answers pings more often"
                    + " than every 30s with GOAWAY too_many_pings and closes the connection");
        }
        return out;
    }

    /** Adds {@code flag=value: accepted, not implemented yet (no effect)} unless the value is upstream's default. */
    static void notImplemented(List<String> out, String flag, Object value, boolean upstreamDefault) {
        if (!upstreamDefault) {
            out.add(flag + "=" + value + ": accepted, not implemented yet (no effect)");
        }
    }

    /**
     * A rule is a CIDR or IP ({@code 10.96.0.0/12}, {@code 10.0.0.1}), a host pattern ({@code *.svc}), or a port
     * ({@code port:443}, {@code port:8000-8999}). The agent's defaults ({@link DialPolicy.Defaults#agent}) always
     * apply: its admin port on this host is never dialled, loopback and link-local only where an allow entry names
     * them. An {@code --admin-server-port} of 0 is set by the agent once the admin server is bound; a specific
     * {@code --admin-bind-address} counts as an address of this host.
     */
    private DialPolicy dialPolicy() {
        List<List<String>> allowParts = split("--dial-allow", dialAllow);
        List<List<String>> denyParts = split("--dial-deny", dialDeny);
        DialPolicy rules;
        try {
            rules = DialPolicy.of(allowParts.get(0), denyParts.get(0), allowParts.get(1), denyParts.get(1),
                    allowParts.get(2), denyParts.get(2));
        } catch (IllegalArgumentException e) {
            throw ConfigException.of("--dial-allow/--dial-deny", e.getMessage(), e);
        }
        int adminPort = adminServerPort >= 0 && adminServerPort <= 65535 ? adminServerPort : 0;
        DialPolicy.Defaults defaults = DialPolicy.Defaults.agent(adminPort);
        InetAddress bind = adminBindAddress == null ? null
                : IpLiteral.parseOrNull(adminBindAddress.strip().replaceAll("^\\[(.*)]$", "$1"));
        if (bind != null && !bind.isLoopbackAddress() && !bind.isAnyLocalAddress()) {
            defaults = defaults.withHostAddresses(List.of(bind));
        }
        return rules.withDefaults(defaults);
    }

    private static List<List<String>> split(String flag, List<String> rules) {
        List<String> cidrs = new ArrayList<>();
        List<String> hosts = new ArrayList<>();
        List<String> ports = new ArrayList<>();
        for (String raw : rules) {
            String rule = raw.strip();
            if (rule.isEmpty()) {
                continue;
            }
            if (rule.startsWith("port:")) {
                ports.add(rule.substring("port:".length()));
            } else if (rule.contains("/") || rule.contains(":") || rule.matches("[0-9.]+")) {
                cidrs.add(rule.contains("/") ? rule : rule + (rule.contains(":") ? "/128" : "/32"));
            } else {
                hosts.add(rule);
            }
        }
        try {
            // Validate each group now so the message names the flag that held the bad rule.
            DialPolicy.of(cidrs, List.of(), hosts, List.of(), ports, List.of());
        } catch (IllegalArgumentException e) {
            throw ConfigException.of(flag, e.getMessage(), e);
        }
        return List.of(cidrs, hosts, ports);
    }
}
