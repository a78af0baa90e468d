package io.tenantgateway.tunnel;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Agent-side tunnel configuration: every flag of the upstream {@code konnectivity-agent} with its upstream
 * default (see {@code shared/spec/konnectivity.md}), plus tenant-gateway's own settings (last group). Validated on
 * construction; a wrong flag value is a {@link ConfigException} naming the flag, the value and what was expected.
 * Flags the tunnel does not read (health and admin servers, {@code --kubeconfig}) live in the agent's
 * {@code AgentConfig}.
 *
 * @param proxyServerHost {@code --proxy-server-host}: load balancer address of the server replicas; also the TLS
 *     server name
 * @param proxyServerPort {@code --proxy-server-port}
 * @param caCert {@code --ca-cert}: CA bundle the server certificate must chain to ({@code null}: the caller
 *     passes TLS material itself)
 * @param agentCert {@code --agent-cert} (optional client certificate, with {@code agentKey})
 * @param agentKey {@code --agent-key}
 * @param alpnProtos {@code --alpn-proto}: ALPN protocols to offer (empty: gRPC's {@code h2}); {@code h2} is
 *     appended when missing, as grpc-go does, so {@code konnectivity} offers {@code [konnectivity, h2]}
 * @param serviceAccountTokenPath {@code --service-account-token-path}: bearer token file, re-read on every connect
 *     attempt ({@code null}: no token)
 * @param agentId {@code --agent-id}
 * @param agentIdentifiers {@code --agent-identifiers}
 * @param syncInterval {@code --sync-interval}: pause between connection attempts while fewer than servercount
 * @param syncIntervalCap {@code --sync-interval-cap}: upper bound of the ×1.5 error backoff
 * @param probeInterval {@code --probe-interval}: how often connection health is checked
 * @param syncForever {@code --sync-forever}: keep dialling new connections even with servercount reached
 * @param keepaliveTime {@code --keepalive-time}: gRPC keepalive ping interval; konnectivity-server answers pings
 *     more often than {@link #MIN_KEEPALIVE_TIME} with GOAWAY {@code too_many_pings}, yet any positive value is
 *     accepted, as upstream does
 * @param xfrChannelSize {@code --xfr-channel-size}: per-tunnel queue length in packets; here it sizes the
 *     per-tunnel buffer used against servers without the flow-control extension ({@link #perTunnelBufferBytes()})
 * @param countServerLeases {@code --count-server-leases}
 * @param leaseNamespace {@code --lease-namespace}
 * @param leaseLabelSelector {@code --lease-label-selector}
 * @param dialTimeout timeout of one dial to a target (upstream: fixed 5 s)
 * @param connectTimeout limit for one server connection attempt, TLS and response headers included
 * @param dialPolicy destinations the agent may dial; default allows all (upstream behaviour)
 * @param flowControl whether to offer the per-tunnel credit extension to servers
 * @param flowControlWindow bytes a peer may send per tunnel before it needs more credit (extension only)
 * @param maxDataSize largest DATA payload the agent sends (the socket read size; upstream uses 4 KiB)
 * @param maxDialsInFlight {@code --max-dials-in-flight}: dials one server connection runs at once; a DIAL_REQ past it
 *     is answered at once with a DIAL_RSP error (upstream: unbounded, one goroutine per dial)
 * @param stuckTargetTimeout {@code --stuck-target-timeout}: how long a tunnel's target may accept nothing while the
 *     server stream is paused because of that tunnel (its buffer is full, or it holds part of the target-buffer
 *     budget another stream waits for) before the tunnel is closed with a CLOSE_RSP error and the stream resumes;
 *     {@link Duration#ZERO}: never (the stream waits for the target, as upstream does)
 */
public record TunnelConfig(
        String proxyServerHost,
        int proxyServerPort,
        Path caCert,
        Path agentCert,
        Path agentKey,
        List<String> alpnProtos,
        Path serviceAccountTokenPath,
        String agentId,
        AgentIdentifiers agentIdentifiers,
        Duration syncInterval,
        Duration syncIntervalCap,
        Duration probeInterval,
        boolean syncForever,
        Duration keepaliveTime,
        int xfrChannelSize,
        boolean countServerLeases,
        String leaseNamespace,
        String leaseLabelSelector,
        Duration dialTimeout,
        Duration connectTimeout,
        DialPolicy dialPolicy,
        boolean flowControl,
        int flowControlWindow,
        int maxDataSize,
        int maxDialsInFlight,
        Duration stuckTargetTimeout) {

    /** konnectivity-server answers pings more frequent than this with GOAWAY {@code too_many_pings}. */
    public static final Duration MIN_KEEPALIVE_TIME = Duration.ofSeconds(30);
    /** gRPC's default message limit, which upstream servers enforce on what we send. */
    public static final int MAX_MESSAGE_SIZE = 4 * 1024 * 1024;
    /**
     * Dials in flight per server connection: 256 covers ~50 dials/s into targets that never answer (5 s dial timeout)
     * and keeps a flood's sockets (one descriptor each) well under the usual 1024 descriptor soft limit.
     */
    public static final int DEFAULT_MAX_DIALS_IN_FLIGHT = 256;
    /**
     * A target that accepts nothing for this long while the server stream waits for it is closed: long enough for a
     * target that reads a few KiB a second (the kernel hands it data one TCP window update at a time, up to 64 KiB
     * on loopback, where kubelet is dialled), short enough that the other tunnels of the stream are not held for
     * minutes (the Go agent holds them until the target reads or goes away).
     */
    public static final Duration DEFAULT_STUCK_TARGET_TIMEOUT = Duration.ofSeconds(30);
    /** Shortest {@code --stuck-target-timeout} other than 0: the check runs every second at most. */
    public static final Duration MIN_STUCK_TARGET_TIMEOUT = Duration.ofSeconds(1);

    public TunnelConfig {
        requireNonNull(proxyServerHost, "proxyServerHost");
        if (proxyServerHost.isBlank()) {
            throw new ConfigException("--proxy-server-host", "\"\"", "a host name or IP address");
        }
        checkPort("--proxy-server-port", proxyServerPort, false);
        if ((agentCert == null) != (agentKey == null)) {
            throw new ConfigException("--agent-cert/--agent-key", agentCert + "/" + agentKey, "both or neither");
        }
        alpnProtos = withH2(requireNonNull(alpnProtos, "alpnProtos"));
        requireNonNull(agentId, "agentId");
        if (agentId.isBlank()) {
            throw new ConfigException("--agent-id", "\"\"", "a non-empty id");
        }
        requireNonNull(agentIdentifiers, "agentIdentifiers");
        positive("--sync-interval", syncInterval);
        positive("--sync-interval-cap", syncIntervalCap);
        if (syncIntervalCap.compareTo(syncInterval) < 0) {
            throw new ConfigException("--sync-interval-cap", GoDuration.format(syncIntervalCap),
                    ">= --sync-interval " + GoDuration.format(syncInterval));
        }
        positive("--probe-interval", probeInterval);
        // Below MIN_KEEPALIVE_TIME is accepted, as upstream does; the CLI warns about it.
        positive("--keepalive-time", keepaliveTime);
        if (xfrChannelSize <= 0) {
            throw new ConfigException("--xfr-channel-size", xfrChannelSize, "> 0");
        }
        requireNonNull(leaseNamespace, "leaseNamespace");
        requireNonNull(leaseLabelSelector, "leaseLabelSelector");
        positive("dialTimeout", dialTimeout); // --dial-timeout
        requireNonNull(connectTimeout, "connectTimeout");
        if (connectTimeout.isNegative() || connectTimeout.isZero()) { // not a flag: a caller's bug
            throw new IllegalArgumentException("connectTimeout: " + GoDuration.format(connectTimeout)
                    + " (expected: > 0)");
        }
        requireNonNull(dialPolicy, "dialPolicy");
        if (flowControlWindow < 16 * 1024) {
            throw new IllegalArgumentException("flowControlWindow: " + flowControlWindow + " (expected: >= 16384)");
        }
        if (maxDataSize < 1024 || maxDataSize > MAX_MESSAGE_SIZE / 2) {
            throw new IllegalArgumentException("maxDataSize: " + maxDataSize + " (expected: 1024.."
                    + MAX_MESSAGE_SIZE / 2 + ")");
        }
        if (maxDialsInFlight < 1) {
            throw new ConfigException("--max-dials-in-flight", maxDialsInFlight, ">= 1");
        }
        requireNonNull(stuckTargetTimeout, "stuckTargetTimeout");
        if (stuckTargetTimeout.isNegative()
                || !stuckTargetTimeout.isZero() && stuckTargetTimeout.compareTo(MIN_STUCK_TARGET_TIMEOUT) < 0) {
            throw new ConfigException("--stuck-target-timeout", GoDuration.format(stuckTargetTimeout),
                    ">= " + GoDuration.format(MIN_STUCK_TARGET_TIMEOUT) + ", or 0 to never close a tunnel for it");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Bytes buffered for one tunnel towards its target before the agent stops reading the shared server stream,
     * when the server does not speak the flow-control extension (upstream's queue of {@code xfr-channel-size}
     * packets, counted in our larger DATA size).
     */
    public long perTunnelBufferBytes() {
        return (long) xfrChannelSize * maxDataSize;
    }

    /** The configuration as flag=value pairs for the startup log; the token file's path is shown, never its content. */
    public Map<String, String> describe() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("proxy-server-host", proxyServerHost);
        out.put("proxy-server-port", Integer.toString(proxyServerPort));
        out.put("ca-cert", String.valueOf(caCert));
        out.put("agent-cert", String.valueOf(agentCert));
        out.put("agent-key", agentKey == null ? "null" : "<set>");
        out.put("alpn-proto", String.join(",", alpnProtos));
        out.put("service-account-token-path", String.valueOf(serviceAccountTokenPath));
        out.put("agent-id", agentId);
        out.put("agent-identifiers", agentIdentifiers.encode());
        out.put("sync-interval", GoDuration.format(syncInterval));
        out.put("sync-interval-cap", GoDuration.format(syncIntervalCap));
        out.put("probe-interval", GoDuration.format(probeInterval));
        out.put("sync-forever", Boolean.toString(syncForever));
        out.put("keepalive-time", GoDuration.format(keepaliveTime));
        out.put("xfr-channel-size", Integer.toString(xfrChannelSize));
        out.put("count-server-leases", Boolean.toString(countServerLeases));
        out.put("dial-timeout", GoDuration.format(dialTimeout));
        out.put("dial-policy", dialPolicy.describe());
        out.put("flow-control", flowControl ? "v1 window=" + flowControlWindow : "off");
        out.put("max-data-size", Integer.toString(maxDataSize));
        out.put("max-dials-in-flight", Integer.toString(maxDialsInFlight));
        out.put("stuck-target-timeout", GoDuration.format(stuckTargetTimeout));
        return out;
    }

    /** grpc-go's {@code appendH2ToNextProtos}: gRPC needs HTTP/2, whatever else the operator offers. */
    private static List<String> withH2(List<String> protocols) {
        List<String> out = new ArrayList<>();
        for (String protocol : protocols) {
            String name = requireNonNull(protocol, "alpnProtos element").strip();
            // pflag reads --alpn-proto= as an empty list.
            if (!name.isEmpty() && !out.contains(name)) {
                out.add(name);
            }
        }
        if (!out.isEmpty() && !out.contains("h2")) {
            out.add("h2");
        }
        return List.copyOf(out);
    }

    private static void positive(String flag, Duration value) {
        requireNonNull(value, flag);
        if (value.isNegative() || value.isZero()) {
            throw new ConfigException(flag, GoDuration.format(value), "> 0");
        }
    }

    private static void checkPort(String flag, int port, boolean zeroAllowed) {
        if (port < (zeroAllowed ? 0 : 1) || port > 65535) {
            throw new ConfigException(flag, port, (zeroAllowed ? 0 : 1) + "..65535");
        }
    }

    /** Upstream defaults; {@code agentId} defaults to a random UUID (the CLI applies {@code PROXY_AGENT_ID}). */
    public static final class Builder {
        private String proxyServerHost = "127.0.0.1";
        private int proxyServerPort = 8091;
        private Path caCert;
        private Path agentCert;
        private Path agentKey;
        private List<String> alpnProtos = List.of();
        private Path serviceAccountTokenPath;
        private String agentId = UUID.randomUUID().toString();
        private AgentIdentifiers agentIdentifiers = AgentIdentifiers.NONE;
        private Duration syncInterval = Duration.ofSeconds(1);
        private Duration syncIntervalCap = Duration.ofSeconds(10);
        private Duration probeInterval = Duration.ofSeconds(1);
        private boolean syncForever;
        private Duration keepaliveTime = Duration.ofHours(1);
        private int xfrChannelSize = 150;
        private boolean countServerLeases;
        private String leaseNamespace = "kube-system";
        private String leaseLabelSelector = "k8s-app=konnectivity-server";
        private Duration dialTimeout = Duration.ofSeconds(5);
        private Duration connectTimeout = Duration.ofSeconds(10);
        private DialPolicy dialPolicy = DialPolicy.ALLOW_ALL;
        private boolean flowControl = true;
        private int flowControlWindow = 2 * 1024 * 1024;
        private int maxDataSize = 64 * 1024;
        private int maxDialsInFlight = DEFAULT_MAX_DIALS_IN_FLIGHT;
        private Duration stuckTargetTimeout = DEFAULT_STUCK_TARGET_TIMEOUT;

        private Builder() {
        }

        private Builder(TunnelConfig c) {
            proxyServerHost = c.proxyServerHost;
            proxyServerPort = c.proxyServerPort;
            caCert = c.caCert;
            agentCert = c.agentCert;
            agentKey = c.agentKey;
            alpnProtos = c.alpnProtos;
            serviceAccountTokenPath = c.serviceAccountTokenPath;
            agentId = c.agentId;
            agentIdentifiers = c.agentIdentifiers;
            syncInterval = c.syncInterval;
            syncIntervalCap = c.syncIntervalCap;
            probeInterval = c.probeInterval;
            syncForever = c.syncForever;
            keepaliveTime = c.keepaliveTime;
            xfrChannelSize = c.xfrChannelSize;
            countServerLeases = c.countServerLeases;
            leaseNamespace = c.leaseNamespace;
            leaseLabelSelector = c.leaseLabelSelector;
            dialTimeout = c.dialTimeout;
            connectTimeout = c.connectTimeout;
            dialPolicy = c.dialPolicy;
            flowControl = c.flowControl;
            flowControlWindow = c.flowControlWindow;
            maxDataSize = c.maxDataSize;
            maxDialsInFlight = c.maxDialsInFlight;
            stuckTargetTimeout = c.stuckTargetTimeout;
        }

        public Builder proxyServerHost(String value) {
            proxyServerHost = value;
            return this;
        }

        public Builder proxyServerPort(int value) {
            proxyServerPort = value;
            return this;
        }

        public Builder caCert(Path value) {
            caCert = value;
            return this;
        }

        public Builder agentCert(Path value) {
            agentCert = value;
            return this;
        }

        public Builder agentKey(Path value) {
            agentKey = value;
            return this;
        }

        public Builder alpnProtos(List<String> value) {
            alpnProtos = value;
            return this;
        }

        public Builder serviceAccountTokenPath(Path value) {
            serviceAccountTokenPath = value;
            return this;
        }

        public Builder agentId(String value) {
            agentId = value;
            return this;
        }

        public Builder agentIdentifiers(AgentIdentifiers value) {
            agentIdentifiers = value;
            return this;
        }

        public Builder syncInterval(Duration value) {
            syncInterval = value;
            return this;
        }

        public Builder syncIntervalCap(Duration value) {
            syncIntervalCap = value;
            return this;
        }

        public Builder probeInterval(Duration value) {
            probeInterval = value;
            return this;
        }

        public Builder syncForever(boolean value) {
            syncForever = value;
            return this;
        }

        public Builder keepaliveTime(Duration value) {
            keepaliveTime = value;
            return this;
        }

        public Builder xfrChannelSize(int value) {
            xfrChannelSize = value;
            return this;
        }

        public Builder countServerLeases(boolean value) {
            countServerLeases = value;
            return this;
        }

        public Builder leaseNamespace(String value) {
            leaseNamespace = value;
            return this;
        }

        public Builder leaseLabelSelector(String value) {
            leaseLabelSelector = value;
            return this;
        }

        public Builder dialTimeout(Duration value) {
            dialTimeout = value;
            return this;
        }

        public Builder connectTimeout(Duration value) {
            connectTimeout = value;
            return this;
        }

        public Builder dialPolicy(DialPolicy value) {
            dialPolicy = value;
            return this;
        }

        public Builder flowControl(boolean value) {
            flowControl = value;
            return this;
        }

        public Builder flowControlWindow(int value) {
            flowControlWindow = value;
            return this;
        }

        public Builder maxDataSize(int value) {
            maxDataSize = value;
            return this;
        }

        public Builder maxDialsInFlight(int value) {
            maxDialsInFlight = value;
            return this;
        }

        public Builder stuckTargetTimeout(Duration value) {
            stuckTargetTimeout = value;
            return this;
        }

        public TunnelConfig build() {
            return new TunnelConfig(proxyServerHost, proxyServerPort, caCert, agentCert, agentKey, alpnProtos,
                    serviceAccountTokenPath, agentId, agentIdentifiers, syncInterval, syncIntervalCap, probeInterval,
                    syncForever, keepaliveTime, xfrChannelSize, countServerLeases, leaseNamespace,
                    leaseLabelSelector, dialTimeout, connectTimeout, dialPolicy, flowControl, flowControlWindow,
                    maxDataSize, maxDialsInFlight, stuckTargetTimeout);
        }
    }
}
