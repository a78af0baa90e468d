package io.tenantgateway.tunnel.metrics;

import static java.util.Objects.requireNonNull;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tenantgateway.tunnel.proto.PacketType;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Agent metrics under upstream's names ({@code konnectivity_network_proxy_agent_*}) so existing dashboards keep
 * working, plus tenant-gateway's own under {@code tenant_gateway_tunnel_*}. Registered on the registry the owner
 * passes in; one instance per agent.
 */
public final class AgentMetrics {
    public static final String PREFIX = "konnectivity_network_proxy_agent_";
    public static final String OWN_PREFIX = "tenant_gateway_tunnel_";
    /** Segment labels of the stream metrics (upstream values). */
    public static final String FROM_AGENT = "from_agent";
    public static final String TO_AGENT = "to_agent";
    /** Direction labels of the deprecated {@code server_connection_failure_count} (upstream values). */
    public static final String TO_SERVER = "to_server";
    public static final String FROM_SERVER = "from_server";

    private final PrometheusRegistry registry;
    private final Histogram dialDuration;
    private final Counter dialFailures;
    private final Gauge openServerConnections;
    private final Gauge knownServerCount;
    private final Gauge openEndpointConnections;
    private final Counter streamPackets;
    private final Counter streamErrors;
    private final Gauge serverFailures;
    private final Counter creditPackets;
    private final Counter dialDenied;
    private final Counter malformedPackets;
    private final Counter sharedStreamPauses;
    private final Counter stuckTargetsClosed;
    private final Counter tunnelBytes;
    // Hot-path data points resolved once: label lookups per packet would cost a map access each.
    private final CounterDataPoint bytesToTarget;
    private final CounterDataPoint bytesFromTarget;
    // Filled on first use (upstream creates a series when it first sees the packet type): written on the tunnel's
    // event loops, hence concurrent.
    private final Map<String, CounterDataPoint> packetsFromAgent = new ConcurrentHashMap<>();
    private final Map<String, CounterDataPoint> packetsToAgent = new ConcurrentHashMap<>();

    public AgentMetrics(PrometheusRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
        dialDuration = Histogram.builder().name(PREFIX + "dial_duration_seconds")
                .help("Latency of dial to the remote endpoint in seconds")
                .classicOnly().classicUpperBounds(0.005, 0.025, 0.1, 0.5, 2.5, 10, 30).register(registry);
        dialFailures = Counter.builder().name(PREFIX + "endpoint_dial_failure_total")
                .help("Number of failures dialing the remote endpoint, by reason (example: timeout).")
                .labelNames("reason").register(registry);
        openServerConnections = Gauge.builder().name(PREFIX + "open_server_connections")
                .help("Current number of open server connections.").register(registry);
        knownServerCount = Gauge.builder().name(PREFIX + "known_server_count")
                .help("Current number of servers agent is trying to connect to.").register(registry);
        openEndpointConnections = Gauge.builder().name(PREFIX + "open_endpoint_connections")
                .help("Current number of open endpoint connections.").register(registry);
        streamPackets = Counter.builder().name(PREFIX + "stream_packets_total")
                .help("Count of packets processed, by segment and packet type (example: from_agent, DIAL_REQ)")
                .labelNames("segment", "packet_type").register(registry);
        streamErrors = Counter.builder().name(PREFIX + "stream_errors_total")
                .help("Count of gRPC stream errors, by segment, grpc Code, packet type. (example: from_agent,"
                        + " Code.Unavailable, DIAL_RSP)")
                .labelNames("segment", "code", "packet_type").register(registry);
        // A gauge only in its TYPE line: it only goes up. The Java client appends _total to every counter, which
        // would rename it (..._failure_count_total) and break the dashboards that know upstream's name.
        serverFailures = Gauge.builder().name(PREFIX + "server_connection_failure_count")
                .help("Count of failures to send to or receive from the proxy server, labeled by the direction"
                        + " (from_server or to_server). DEPRECATED, please use stream_errors_total")
                .labelNames("direction").register(registry);
        creditPackets = Counter.builder().name(OWN_PREFIX + "credit_packets_total")
                .help("TG_CREDIT packets of tenant-gateway's flow-control extension, by segment (from_agent,"
                        + " to_agent); kept out of stream_packets_total, whose packet_type values are upstream's.")
                .labelNames("segment").register(registry);
        dialDenied = Counter.builder().name(OWN_PREFIX + "dial_denied_total")
                .help("Dials refused by the agent's dial policy, by the rule that matched (example: deny cidr"
                        + " 127.0.0.0/8, malformed host).")
                .labelNames("rule").register(registry);
        malformedPackets = Counter.builder().name(OWN_PREFIX + "malformed_packets_total")
                .help("Packets from a server that were ignored or answered with an error, by reason.")
                .labelNames("reason").register(registry);
        sharedStreamPauses = Counter.builder().name(OWN_PREFIX + "shared_stream_pauses_total")
                .help("Times the agent stopped reading a server stream because one tunnel's buffer was full"
                        + " (only against servers without the flow-control extension).").register(registry);
        stuckTargetsClosed = Counter.builder().name(OWN_PREFIX + "stuck_targets_closed_total")
                .help("Tunnels closed because their target accepted nothing for --stuck-target-timeout while the"
                        + " server stream was paused because of them (CLOSE_RSP with an error to the server).")
                .register(registry);
        tunnelBytes = Counter.builder().name(OWN_PREFIX + "bytes_total")
                .help("Payload bytes moved through tunnels, by direction (to_target, from_target).")
                .labelNames("direction").register(registry);
        bytesToTarget = tunnelBytes.labelValues("to_target");
        bytesFromTarget = tunnelBytes.labelValues("from_target");
        // Both directions exist from the start, as on upstream's /metrics (two bounded series; 0 until a failure).
        serverFailures.labelValues(TO_SERVER);
        serverFailures.labelValues(FROM_SERVER);
    }

    public void dialSucceeded(Duration elapsed) {
        dialDuration.observe(elapsed.toNanos() / 1e9);
    }

    /** @param reason {@code timeout} or {@code unknown} (upstream values) */
    public void dialFailed(String reason) {
        dialFailures.labelValues(reason).inc();
    }

    /** @param rule the policy rule that matched (configured entries or fixed names, so the label stays bounded) */
    public void dialDenied(String rule) {
        dialDenied.labelValues(rule).inc();
    }

    public void serverConnections(int count) {
        openServerConnections.set(count);
    }

    public void serverCount(int count) {
        knownServerCount.set(count);
    }

    public void endpointOpened() {
        openEndpointConnections.inc();
    }

    public void endpointClosed() {
        openEndpointConnections.dec();
    }

    /**
     * A packet crossed the stream; {@code segment} is {@link #FROM_AGENT} or {@link #TO_AGENT}. The series is created
     * on first use, as upstream does. {@code TG_CREDIT} (our extension) is counted in
     * {@code tenant_gateway_tunnel_credit_packets_total} instead, so {@code packet_type} keeps upstream's values.
     */
    public void packet(String segment, String packetType) {
        if (CREDIT.equals(packetType)) {
            creditPackets.labelValues(segment).inc();
            return;
        }
        Map<String, CounterDataPoint> known = FROM_AGENT.equals(segment) ? packetsFromAgent
                : TO_AGENT.equals(segment) ? packetsToAgent : null;
        if (known == null) {
            streamPackets.labelValues(segment, packetType).inc();
            return;
        }
        known.computeIfAbsent(packetType, type -> streamPackets.labelValues(segment, type)).inc();
    }

    private static final String CREDIT = PacketType.TG_CREDIT.name();

    /**
     * A send/receive failed; {@code code} is the gRPC code in Go's spelling ({@link GrpcCodes#goName}). Also counts
     * the deprecated {@code server_connection_failure_count}: a failure on {@link #TO_AGENT} (receiving) is
     * {@code from_server}, on {@link #FROM_AGENT} (sending) {@code to_server}, as upstream's {@code Recv}/{@code Send}.
     */
    public void streamError(String segment, String code, String packetType) {
        streamErrors.labelValues(segment, code, packetType).inc();
        serverFailures.labelValues(FROM_AGENT.equals(segment) ? TO_SERVER : FROM_SERVER).inc();
    }

    public void malformed(String reason) {
        malformedPackets.labelValues(reason).inc();
    }

    public void sharedStreamPaused() {
        sharedStreamPauses.inc();
    }

    public void stuckTargetClosed() {
        stuckTargetsClosed.inc();
    }

    public void bytesToTarget(long bytes) {
        bytesToTarget.inc(bytes);
    }

    public void bytesFromTarget(long bytes) {
        bytesFromTarget.inc(bytes);
    }
}
