package io.tenantgateway.tunnel.client;

import static io.tenantgateway.tunnel.transport.GrpcHeaders.key;
import static io.tenantgateway.tunnel.transport.GrpcHeaders.values;
import static java.util.Objects.requireNonNull;

import com.google.protobuf.UnsafeByteOperations;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.tenantgateway.certs.TlsFailures;
import io.tenantgateway.common.logging.Verbosity;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.endpoint.ConnectionTable;
import io.tenantgateway.tunnel.endpoint.DialFailure;
import io.tenantgateway.tunnel.endpoint.EndpointConnection;
import io.tenantgateway.tunnel.endpoint.EndpointRelayHandler;
import io.tenantgateway.tunnel.metrics.AgentMetrics;
import io.tenantgateway.tunnel.metrics.GrpcCodes;
import io.tenantgateway.tunnel.proto.Data;
import io.tenantgateway.tunnel.proto.DialRequest;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.FlowControlOffer;
import io.tenantgateway.tunnel.protocol.Headers;
import io.tenantgateway.tunnel.protocol.Packets;
import io.tenantgateway.tunnel.protocol.ReceiveWindow;
import io.tenantgateway.tunnel.transport.Transports;
import io.tenantgateway.tunnel.transport.TunnelMethods;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent connection to one konnectivity-server replica: a gRPC channel of its own (a new TCP+TLS connection
 * through the load balancer) carrying one {@code /AgentService/Connect} stream, and the tunnels on it.
 *
 * <p>Threading: the channel is pinned to one Netty event loop and runs its callbacks directly on it
 * ({@code directExecutor}); target sockets of this stream are registered on the same loop. So the whole data
 * path of this server connection is single-threaded: no locks, no hand-offs. Other threads ({@link #drain()},
 * {@link #closeGracefully}, {@link #close()}) submit commands to the loop; every future this class returns is
 * completed on the loop, so dependents must not block.
 *
 * <p>Shutdown without loss ({@link #closeGracefully}): the stream stays open until every tunnel has been closed by
 * its peer (CLOSE_REQ answered, or the target closed and its CLOSE_RSP went out) and every target socket is shut,
 * then it is half-closed. gRPC sends everything queued before the END_STREAM, and the server ends the stream once
 * it processed all of it, so nothing is dropped. {@link #close()} instead cancels (RST_STREAM): DATA still queued
 * in gRPC or HTTP/2 buffers, or not yet read by the server, is lost.
 */
public final class TunnelClient implements AutoCloseable, EndpointConnection.TunnelPort {
    private static final Logger log = LoggerFactory.getLogger(TunnelClient.class);
    /**
     * Messages handled in one go before the stream yields to the event loop's other work (target sockets, timers,
     * other streams): grpc's deframer would otherwise deliver every buffered message (a flood fits ~400,000 small
     * packets into an 8 MiB window) before any I/O.
     */
    static final int MESSAGES_PER_TURN = 64;
    /**
     * Bytes of answers (DIAL_RSP, CLOSE_RSP, TG_CREDIT) the agent queues towards a server whose stream is not ready
     * before it stops requesting messages from it: a server that stops reading while it sends cannot grow the
     * agent's outbound queue past {@link #ON_READY_THRESHOLD} plus this (the Go agent blocks in {@code Send}). Some
     * slack, not zero: DATA towards targets needs no answer and keeps flowing while the server is busy.
     */
    static final int MAX_SENT_WHILE_UNREADY = 256 * 1024;
    /** Per-dial log lines (DIAL_REQ received, dial failed, connection established) per second per stream. */
    static final int DIAL_LOG_LINES_PER_SECOND = 100;
    /** Bytes gRPC may queue for this stream before {@code isReady()} turns false. */
    private static final int ON_READY_THRESHOLD = 1024 * 1024;
    /**
     * The stream's HTTP/2 receive window to start with (grpc-java's default): what a server may send before the agent
     * has handed it on. grpc's flow-control tuning (a PING with each burst of DATA, as grpc-go's BDP estimator does)
     * grows it to twice the measured bandwidth-delay product, at most 8 MiB (grpc-java's own limit, and the memory
     * budget's bound), so a distant server still fills the link. A fixed 8 MiB window kept 8 MiB of direct buffers
     * filled whenever the agent was the slower side: 16 MiB of direct memory after 1 GiB through 64 tunnels, against
     * 6 MiB with this one (BENCHMARKS.md, issue 35), at the same throughput on loopback.
     */
    private static final int INITIAL_HTTP2_WINDOW = 1024 * 1024;
    /** Largest DATA payload accepted towards a target (what an upstream server can send at most). */
    static final int MAX_DATA_PAYLOAD = TunnelConfig.MAX_MESSAGE_SIZE;
    /**
     * Largest message accepted from a server: a 4 MiB DATA plus 64 KiB, so a DATA a little past what upstream servers
     * can send costs one tunnel, not the stream; anything larger fails the stream in grpc (as Go's 4 MiB limit does).
     * Kept this tight because grpc holds a requested message whole in direct buffers before it is delivered.
     */
    static final int MAX_INBOUND_MESSAGE = MAX_DATA_PAYLOAD + 64 * 1024;
    /**
     * Longest DIAL_REQ address dialled: a DNS name (253) or an IPv6 literal with brackets and a zone id, a colon and a
     * port fit many times over; longer ones are answered with a short DIAL_RSP error (not echoed whole).
     */
    static final int MAX_ADDRESS_LENGTH = 1024;
    /** What one requested, undelivered message may hold, reserved in {@link TargetBudget} while it is requested. */
    static final long REQUEST_RESERVATION = MAX_INBOUND_MESSAGE;

    public enum State { CONNECTING, READY, DRAINING, CLOSED }

    private final ClientResources resources;
    private final TunnelConfig config;
    private final AgentMetrics metrics;
    private final String token;
    private final EventLoop loop;
    private final TargetBudget budget;
    private final ManagedChannel channel;
    private final ConnectionTable table = new ConnectionTable();
    private final CompletableFuture<ServerIdentity> connected = new CompletableFuture<>();
    private final CompletableFuture<Status> closed = new CompletableFuture<>();
    private final CompletableFuture<DrainResult> drained = new CompletableFuture<>();

    // Loop-confined state.
    private ClientCall<Packet, Packet> call;
    private boolean callDone;
    /**
     * The server's trailers arrived ({@link TrailersWatch}) but grpc has not reported the end yet: it does so only
     * once every message it already received was delivered, which a paused stream never asks for.
     */
    private boolean serverEnded;
    private boolean creditMode;
    private long serverWindow;
    private final ArrayDeque<EndpointConnection> parked = new ArrayDeque<>();
    private final Set<EndpointConnection> fullBuffers = new HashSet<>();
    private boolean pauseLogged;
    // Inbound demand (loop-confined): at most one message requested at a time, its REQUEST_RESERVATION held.
    private boolean requested;
    private long targetBytes;
    private boolean budgetWaiting;
    private boolean budgetPaused;
    private boolean budgetPauseLogged;
    private int deliveredInTurn;
    private boolean turnScheduled;
    private long sentWhileUnready;
    private int dialsInFlight;
    private boolean dialCapLogged;
    private long dialLogWindowStart = System.nanoTime();
    private int dialLogLines;
    private long dialLogSuppressed;
    private final Set<String> malformedLogged = new HashSet<>();
    private ScheduledFuture<?> connectTimer;
    // Stuck targets (loop-confined): the check's timer, and when it first saw the current pause.
    private ScheduledFuture<?> stuckTimer;
    private boolean pauseSeen;
    private long pauseSeenAt;
    // Graceful close (loop-confined).
    private boolean closingGracefully;
    private boolean halfClosed;
    private int closingTargets;
    private int tunnelsCut;
    private boolean streamCut;
    private ScheduledFuture<?> graceTimer;

    // Read by other threads (snapshots, the set).
    private volatile State state = State.CONNECTING;
    private volatile Instant since;
    private volatile String serverId = "";

    /** @param token bearer token read for this attempt, or {@code null} */
    TunnelClient(ClientResources resources, String token) {
        this.resources = requireNonNull(resources, "resources");
        this.config = resources.config();
        this.metrics = resources.metrics();
        this.token = token;
        this.loop = resources.group().next();
        this.budget = resources.budget();
        this.since = resources.clock().instant();
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(config.proxyServerHost(),
                        config.proxyServerPort())
                .eventLoopGroup(loop)
                .channelType(Transports.socketChannel(loop))
                .sslContext(resources.sslContext())
                .directExecutor()
                .disableRetry()
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE)
                .initialFlowControlWindow(INITIAL_HTTP2_WINDOW)
                .keepAliveTime(config.keepaliveTime().toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveWithoutCalls(true)
                .userAgent("tenant-gateway-agent");
        this.channel = builder.build();
    }

    /** Opens the Connect stream. {@link #connected()} completes when the server's headers arrive. */
    void start() {
        loop.execute(this::startCall);
    }

    /** Completes with the server's identity, or fails with the reason the attempt failed. */
    public CompletableFuture<ServerIdentity> connected() {
        return connected;
    }

    /** Completes with the final status once the stream is gone and every tunnel of it is closed. */
    public CompletableFuture<Status> closeFuture() {
        return closed;
    }

    public State state() {
        return state;
    }

    public String serverId() {
        return serverId;
    }

    /** Whether the underlying channel is still READY (the probe drops connections that are not). */
    boolean channelReady() {
        return channel.getState(false) == ConnectivityState.READY;
    }

    /** The gRPC channel's connectivity state (for logs). */
    ConnectivityState channelState() {
        return channel.getState(false);
    }

    ServerConnectionSnapshot snapshot() {
        return new ServerConnectionSnapshot(serverId, state.name(), since, creditMode, table.size());
    }

    void addTunnelSnapshots(List<TunnelSnapshot> out, Instant now) {
        for (EndpointConnection connection : table.connections()) {
            if (connection.state() == EndpointConnection.State.OPEN) {
                out.add(new TunnelSnapshot(connection.connectId(), serverId, connection.address(),
                        connection.bytesToTarget(), connection.bytesFromTarget(), connection.bufferedToTarget(),
                        Duration.between(connection.openedAt(), now)));
            }
        }
    }

    int openTunnels() {
        return table.size();
    }

    /** Sends DRAIN: the server stops routing new dials here; existing tunnels keep working. */
    public void drain() {
        loop.execute(() -> {
            if (state == State.READY) {
                setState(State.DRAINING);
                send(Packets.drain());
                log.info("sent DRAIN serverID={}", serverId);
            }
        });
    }

    /**
     * Closes the stream without losing data, bounded by {@code deadline}: waits until no tunnel is open (each closed
     * by a CLOSE_REQ/CLOSE_RSP exchange or by its target, whose CLOSE_RSP went out after all its DATA) and every
     * target socket is closed, then half-closes and waits for the server to end the stream. When the deadline
     * passes first, the stream is cancelled and the result counts the tunnels that were cut. Call {@link #drain()}
     * first so the server routes no new dials here (dials it still sends are served until the half-close).
     *
     * <p>Idempotent and non-blocking; any thread. The future completes on this connection's event loop once the
     * stream is gone (never exceptionally). A later {@link #close()} cancels a graceful close still in progress.
     */
    public CompletableFuture<DrainResult> closeGracefully(Instant deadline) {
        requireNonNull(deadline, "deadline");
        try {
            loop.execute(() -> startGracefulClose(deadline));
        } catch (RejectedExecutionException e) {
            drained.complete(new DrainResult(serverId, openTunnels(), false,
                    Status.CANCELLED.withDescription("event loop shut down")));
        }
        return drained;
    }

    private void startGracefulClose(Instant deadline) {
        if (closingGracefully || state == State.CLOSED) {
            return; // in progress, or finish() already completed the result
        }
        closingGracefully = true;
        if (call == null || state == State.CONNECTING) {
            close("agent shutting down");
            return;
        }
        long delay = Math.max(0, Duration.between(resources.clock().instant(), deadline).toNanos());
        graceTimer = loop.schedule(this::graceOver, delay, TimeUnit.NANOSECONDS);
        if (!table.connections().isEmpty()) {
            log.info("waiting for tunnels to close before ending the stream serverID={} openTunnels={}", serverId,
                    table.size());
        }
        maybeHalfClose();
    }

    private void maybeHalfClose() {
        if (!closingGracefully || halfClosed || callDone || table.size() > 0 || closingTargets > 0) {
            return;
        }
        halfClosed = true;
        log.info("every tunnel closed; half-closing the stream and waiting for the server to end it serverID={}",
                serverId);
        call.halfClose();
    }

    private void graceOver() {
        if (callDone) {
            return;
        }
        if (!halfClosed) {
            int open = table.size();
            log.warn("shutdown grace over; cutting tunnels serverID={} openTunnels={} closingTargets={}", serverId,
                    open, closingTargets);
            call.cancel("shutdown grace over with " + open + " tunnel(s) open", null);
        } else {
            streamCut = true;
            log.warn("shutdown grace over before the server ended the half-closed stream; cancelling it serverID={}",
                    serverId);
            call.cancel("shutdown grace over waiting for the server to end the stream", null);
        }
    }

    /**
     * Waits for the gRPC channel's transport to terminate, after the stream ended (a graceful close shuts the
     * channel down with {@code shutdown()}, which lets queued frames and the GOAWAY go out). Blocks: never call it
     * on an event loop.
     *
     * @return whether the channel terminated in time
     */
    boolean awaitTermination(Duration timeout) {
        try {
            return channel.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Cancels the stream at once; every tunnel on it closes and data still queued towards the server may be lost
     * (use {@link #closeGracefully} on shutdown). Idempotent and non-blocking (see {@link #closeFuture()}).
     */
    @Override
    public void close() {
        close("agent closed the connection");
    }

    void close(String reason) {
        loop.execute(() -> {
            if (call != null && !callDone) {
                call.cancel(reason, null);
            } else if (call == null) {
                finish(Status.CANCELLED.withDescription(reason));
            }
        });
    }

    private void startCall() {
        Metadata headers = new Metadata();
        headers.put(key(Headers.AGENT_ID), config.agentId());
        headers.put(key(Headers.AGENT_IDENTIFIERS), config.agentIdentifiers().encode());
        if (token != null) {
            headers.put(key(Headers.AUTHORIZATION), Headers.bearer(token));
        }
        if (config.flowControl()) {
            headers.put(key(Headers.FLOW_CONTROL), FlowControlOffer.v1(config.flowControlWindow()).format());
        }
        call = channel.newCall(TunnelMethods.CONNECT, CallOptions.DEFAULT.withOnReadyThreshold(ON_READY_THRESHOLD)
                .withStreamTracerFactory(new TrailersWatch()));
        call.start(new Listener(), headers);
        maybeRequest();
        connectTimer = loop.schedule(() -> {
            if (state == State.CONNECTING && !callDone) {
                call.cancel("no response headers within " + GoDuration.format(config.connectTimeout()), null);
            }
        }, config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Tells the loop when the server ends the stream. grpc calls {@code inboundTrailers} on the transport thread as
     * the trailers arrive, while it holds the end back from {@link Listener#onClose} until every message it already
     * received was delivered; a stream the agent paused would never learn of its end (issue 31).
     */
    private final class TrailersWatch extends ClientStreamTracer.Factory {
        @Override
        public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
            return new ClientStreamTracer() {
                @Override
                public void inboundTrailers(Metadata trailers) {
                    try {
                        loop.execute(TunnelClient.this::onServerEnded); // after grpc finished handling them
                    } catch (RejectedExecutionException e) {
                        // the loop is gone, and the stream with it
                    }
                }
            };
        }
    }

    private void onServerEnded() {
        if (callDone) {
            return; // nothing was waiting: grpc reported the end already
        }
        serverEnded = true;
        maybeRequest(); // not paused: the rest is delivered and grpc reports the end; paused: cancelled there
    }

    /**
     * The stream cannot take its next message now, for {@code reason}. If the server already ended it, waiting would
     * hold the ended stream (and its tunnels) until the pause ends, maybe never: the rest of what the server sent
     * before its end is dropped and the stream cancelled, so the tunnels close and the set reconnects.
     */
    private void paused(String reason) {
        if (serverEnded && !callDone) {
            call.cancel("server ended the stream while the agent was not reading it (" + reason + ")", null);
        }
    }

    private final class Listener extends ClientCall.Listener<Packet> {
        @Override
        public void onHeaders(Metadata headers) {
            try {
                String id = Headers.single(Headers.SERVER_ID, values(headers, Headers.SERVER_ID));
                int count = Headers.serverCount(values(headers, Headers.SERVER_COUNT));
                Optional<FlowControlOffer> offer = config.flowControl()
                        ? FlowControlOffer.parse(headers.get(key(Headers.FLOW_CONTROL))) : Optional.empty();
                boolean credit = offer.isPresent();
                serverWindow = credit ? offer.get().window() : 0;
                creditMode = credit;
                serverId = id;
                connectTimer.cancel(false);
                Verbosity.v(log, 2).addKeyValue("serverID", id).log("Connect to server");
                setState(State.READY);
                startStuckTargetCheck();
                connected.complete(new ServerIdentity(id, count, credit));
            } catch (IllegalArgumentException e) {
                call.cancel("invalid response headers: " + e.getMessage(), null);
            }
        }

        @Override
        public void onMessage(Packet packet) {
            if (requested) {
                requested = false;
                budget.release(REQUEST_RESERVATION);
            }
            deliveredInTurn++;
            try {
                handle(packet);
            } catch (RuntimeException e) {
                packetFailed(packet, e); // one packet's problem never cancels the stream
            } finally {
                maybeRequest();
            }
        }

        @Override
        public void onReady() {
            sentWhileUnready = 0;
            wakeParked();
            maybeRequest();
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            callDone = true;
            finish(status);
        }
    }

    private void finish(Status status) {
        if (state == State.CLOSED) {
            return;
        }
        State before = state;
        setState(State.CLOSED);
        if (connectTimer != null) {
            connectTimer.cancel(false);
        }
        if (stuckTimer != null) {
            stuckTimer.cancel(false);
        }
        if (budgetPaused) {
            budgetPaused = false;
            budget.streamPaused(false);
        }
        if (closingGracefully && !halfClosed) {
            // Cut by the grace timer, or lost before the half-close: open tunnels and unfinished target flushes.
            tunnelsCut = table.size() + closingTargets;
        }
        for (EndpointConnection connection : new ArrayList<>(table.connections())) {
            connection.streamLost();
        }
        parked.clear();
        fullBuffers.clear();
        if (requested) {
            requested = false;
            budget.release(REQUEST_RESERVATION);
        }
        if (graceTimer != null) {
            graceTimer.cancel(false);
        }
        if (before != State.CONNECTING) {
            if (!status.isOk()) { // a graceful close ends with OK: not an error
                metrics.streamError(AgentMetrics.TO_AGENT, GrpcCodes.goName(status.getCode()), "UNKNOWN");
            }
            log.info("server connection closed serverID={} status={} description=\"{}\"", serverId,
                    status.getCode(), describe(status));
        }
        connected.completeExceptionally(new ConnectAttemptException(status, describe(status)));
        boolean graceful = halfClosed && status.isOk();
        if (halfClosed && !status.isOk() && !streamCut) {
            streamCut = true; // the server failed the stream after our half-close: we cannot know what it got
        }
        if (graceful) {
            channel.shutdown(); // the stream is done; let the GOAWAY and anything queued go out
        } else {
            channel.shutdownNow();
        }
        closed.complete(status);
        drained.complete(new DrainResult(serverId, tunnelsCut, streamCut, status));
    }

    /** A sentence for logs: the status, with TLS causes made readable. */
    static String describe(Status status) {
        String description = status.getDescription();
        Throwable cause = status.getCause();
        if (cause != null) {
            String tls = TlsFailures.describe(cause);
            return description == null ? tls : description + ": " + tls;
        }
        return description == null ? status.getCode().name() : description;
    }

    // ---- packets from the server ----

    /**
     * Asks the stream for its next message unless something says wait; each wait has its own wake-up: a full tunnel
     * buffer ({@link #bufferFull}), a server that does not read our answers ({@code onReady}), the turn's quota
     * ({@link #newTurn}), the target-buffer budget ({@link TargetBudget#await} or this stream's targets draining).
     * Once the server ended the stream, no wait but the turn's: a pause ends it ({@link #paused}).
     */
    private void maybeRequest() {
        if (requested || callDone || call == null) {
            return;
        }
        if (!fullBuffers.isEmpty()) {
            paused("a tunnel buffer is full");
            return;
        }
        if (!halfClosed && sentWhileUnready >= MAX_SENT_WHILE_UNREADY && !call.isReady()) {
            paused("the server does not read the agent's answers");
            return;
        }
        if (deliveredInTurn >= MESSAGES_PER_TURN) {
            if (!turnScheduled) {
                turnScheduled = true;
                // schedule(0), not execute(): scheduled tasks run after the next select, so sockets get their turn.
                loop.schedule(this::newTurn, 0, TimeUnit.NANOSECONDS);
            }
            return;
        }
        if (targetBytes == 0) {
            budget.reserveAnyway(REQUEST_RESERVATION); // nothing of ours to drain: waiting could never end
        } else if (!budget.tryReserve(REQUEST_RESERVATION)) {
            if (serverEnded) {
                paused("target buffers reached the direct-memory budget");
            } else {
                waitForBudget();
            }
            return;
        }
        if (budgetPaused) {
            budgetPaused = false;
            budget.streamPaused(false);
            log.debug("target-buffer budget has room again; resuming the server stream serverID={}", serverId);
        }
        requested = true;
        call.request(1);
    }

    private void newTurn() {
        turnScheduled = false;
        deliveredInTurn = 0;
        maybeRequest();
    }

    private void waitForBudget() {
        if (!budgetPaused) {
            budgetPaused = true;
            budget.streamPaused(true);
            metrics.sharedStreamPaused();
            if (!budgetPauseLogged) {
                budgetPauseLogged = true;
                log.warn("target buffers reached the agent's direct-memory budget; pausing the server stream until"
                        + " targets drain (no tunnel is closed) serverID={} budget={} used={} thisStream={}", serverId,
                        budget.limit(), budget.account().used(), targetBytes);
            }
        }
        if (!budgetWaiting) {
            budgetWaiting = true;
            budget.await(REQUEST_RESERVATION, () -> {
                try {
                    loop.execute(() -> {
                        budgetWaiting = false;
                        maybeRequest();
                    });
                } catch (RejectedExecutionException e) {
                    // the loop is gone, and the stream with it
                }
            });
        }
    }

    /**
     * Runs {@link #closeStuckTargets} every second (a quarter of {@code --stuck-target-timeout} when that is shorter)
     * for the stream's life, unless the timeout is 0. Without a pause a run reads two fields.
     */
    private void startStuckTargetCheck() {
        long timeout = config.stuckTargetTimeout().toNanos();
        if (timeout > 0) {
            long period = Math.min(TimeUnit.SECONDS.toNanos(1), timeout / 4);
            stuckTimer = loop.scheduleAtFixedRate(this::closeStuckTargets, period, period, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * [A8] Closes the tunnels that hold this stream paused and whose targets took nothing for
     * {@code --stuck-target-timeout}, counted from the pause's start at the earliest: a tunnel over its buffer's
     * high-water mark, or, while any stream waits for the target-buffer budget, each tunnel of this stream with bytes
     * for its target. Each gets CLOSE_RSP with the reason and loses what it buffered; the stream then reads again. A
     * target that takes bytes, however slowly, keeps its tunnel ({@link EndpointConnection#targetIdleNanos}).
     */
    private void closeStuckTargets() {
        boolean holdingBudget = targetBytes > 0 && budget.streamsPaused();
        if (callDone || fullBuffers.isEmpty() && !holdingBudget) {
            pauseSeen = false;
            return;
        }
        long now = System.nanoTime();
        if (!pauseSeen) {
            pauseSeen = true;
            pauseSeenAt = now;
        }
        Duration timeout = config.stuckTargetTimeout();
        List<EndpointConnection> stuck = null;
        for (EndpointConnection connection : holdingBudget ? table.connections() : fullBuffers) {
            if (connection.state() != EndpointConnection.State.OPEN || connection.bufferedToTarget() == 0) {
                continue;
            }
            long idle = Math.min(connection.targetIdleNanos(now), now - pauseSeenAt);
            if (idle >= timeout.toNanos()) {
                if (stuck == null) {
                    stuck = new ArrayList<>();
                }
                stuck.add(connection);
            }
        }
        if (stuck == null) {
            return;
        }
        String reason = "target accepted nothing for " + GoDuration.format(timeout)
                + " while the server stream was paused for it (--stuck-target-timeout)";
        for (EndpointConnection connection : stuck) {
            metrics.stuckTargetClosed();
            log.warn("closing tunnel: its target accepted nothing for {} while the server stream was paused for it;"
                    + " the stream resumes (--stuck-target-timeout) connectionID={} address={} buffered={}"
                    + " serverID={}", GoDuration.format(timeout), connection.connectId(), connection.address(),
                    connection.bufferedToTarget(), serverId);
            connection.fail(reason);
        }
    }

    /** Any exception while handling one packet: that packet gets its error answer, the stream goes on. */
    private void packetFailed(Packet packet, RuntimeException e) {
        String detail = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        metrics.malformed("handling_failed");
        if (malformedLogged.add("handling_failed")) {
            log.warn("failed to handle a packet from the server; answered with an error, the stream goes on"
                    + " serverID={} packet=\"{}\" error=\"{}\" (further ones are logged at DEBUG)", serverId,
                    Packets.describe(packet), detail);
        } else {
            log.debug("failed to handle a packet from the server serverID={} packet=\"{}\"", serverId,
                    Packets.describe(packet), e);
        }
        try {
            switch (packet.getType()) {
                case DIAL_REQ -> {
                    long random = packet.getDialRequest().getRandom();
                    EndpointConnection pending = table.byRandom(random);
                    if (pending != null && pending.state() == EndpointConnection.State.DIALING) {
                        pending.streamLost(); // leaves the table; its dial listener sends nothing more
                    }
                    send(Packets.dialFailure(random, "dial tcp " + packet.getDialRequest().getAddress() + ": "
                            + detail));
                }
                case DATA -> {
                    long connectId = packet.getData().getConnectID();
                    EndpointConnection connection = table.get(connectId);
                    if (connection != null && connection.state() == EndpointConnection.State.OPEN) {
                        connection.fail(detail);
                    } else {
                        send(Packets.closeResponse(connectId, detail));
                    }
                }
                case CLOSE_REQ -> send(Packets.closeResponse(packet.getCloseRequest().getConnectID(), detail));
                default -> {
                }
            }
        } catch (RuntimeException again) {
            log.debug("could not answer the failed packet serverID={}", serverId, again);
        }
    }

    private void handle(Packet packet) {
        if (TunnelMethods.invalidUtf8(packet)) {
            malformed("invalid_utf8", Packets.describe(packet) + " has a string field that is not UTF-8");
            if (packet.getType() == io.tenantgateway.tunnel.proto.PacketType.DIAL_REQ && !halfClosed) {
                send(Packets.dialFailure(packet.getDialRequest().getRandom(), "dial tcp "
                        + packet.getDialRequest().getAddress() + ": address is not valid UTF-8 (expected: host:port)"));
            }
            return;
        }
        Packets.Malformation problem = Packets.check(packet, creditMode);
        if (problem != null) {
            malformed(problem.reason(), problem.message());
            return;
        }
        metrics.packet(AgentMetrics.TO_AGENT, Packets.typeName(packet));
        if (log.isTraceEnabled()) {
            log.trace("received {} serverID={}", Packets.describe(packet), serverId);
        }
        switch (packet.getType()) {
            case DIAL_REQ -> onDialRequest(packet.getDialRequest());
            case DATA -> onData(packet.getData());
            case CLOSE_REQ -> onCloseRequest(packet.getCloseRequest().getConnectID());
            case DIAL_CLS -> onDialClose(packet.getCloseDial().getRandom());
            case TG_CREDIT -> onCredit(packet.getTgCredit().getConnectID(), packet.getTgCredit().getBytes());
            default -> malformed("unexpected_type", packet.getType() + " is not sent to agents");
        }
    }

    private void malformed(String reason, String message) {
        metrics.malformed(reason);
        if (malformedLogged.add(reason)) {
            log.warn("ignoring malformed packet from server serverID={} reason={} detail=\"{}\" (further ones of"
                    + " this kind are logged at DEBUG)", serverId, reason, message);
        } else {
            log.debug("ignoring malformed packet from server serverID={} reason={} detail=\"{}\"", serverId, reason,
                    message);
        }
    }

    /**
     * A per-dial log line at V {@code level} (upstream's lines), at most {@link #DIAL_LOG_LINES_PER_SECOND} per second
     * per stream: under a dial flood the log would otherwise cost more than the dials (and fill the node's disk).
     * What was left out is counted in one line per second.
     */
    private org.slf4j.spi.LoggingEventBuilder dialLog(int level) {
        org.slf4j.spi.LoggingEventBuilder builder = Verbosity.v(log, level);
        if (builder instanceof org.slf4j.spi.NOPLoggingEventBuilder) {
            return builder;
        }
        long now = System.nanoTime();
        if (now - dialLogWindowStart >= TimeUnit.SECONDS.toNanos(1)) {
            if (dialLogSuppressed > 0) {
                log.info("left out {} per-dial log lines in the last {} ms (more than {} a second) serverID={}",
                        dialLogSuppressed, TimeUnit.NANOSECONDS.toMillis(now - dialLogWindowStart),
                        DIAL_LOG_LINES_PER_SECOND, serverId);
            }
            dialLogWindowStart = now;
            dialLogLines = 0;
            dialLogSuppressed = 0;
        }
        if (dialLogLines < DIAL_LOG_LINES_PER_SECOND) {
            dialLogLines++;
            return builder;
        }
        dialLogSuppressed++;
        return org.slf4j.spi.NOPLoggingEventBuilder.singleton();
    }

    private void onDialRequest(DialRequest request) {
        long random = request.getRandom();
        String address = request.getAddress();
        if (address.length() > MAX_ADDRESS_LENGTH) {
            // Echoed twice in the dial error, a 3 MB address made a 6 MB DIAL_RSP (over a Go server's 4 MiB receive
            // limit) and the stream stalled: every later packet on it waited behind that answer.
            malformed("address_too_long", "DIAL_REQ random=" + random + " address of " + address.length()
                    + " characters");
            send(Packets.dialFailure(random, "dial tcp " + address.substring(0, 64) + "…: address is "
                    + address.length() + " characters long (expected: host:port, at most " + MAX_ADDRESS_LENGTH
                    + ")"));
            return;
        }
        dialLog(3).addKeyValue("serverID", serverId).addKeyValue("agentID", config.agentId())
                .addKeyValue("dialID", random).addKeyValue("dialAddress", address).log("Received DIAL_REQ");
        if (halfClosed) {
            // The stream is half-closed: no DIAL_RSP can go out; the server fails the dial when the stream ends.
            log.debug("ignoring DIAL_REQ after the half-close dialID={} address={} serverID={}", random, address,
                    serverId);
            return;
        }
        if (!Packets.TCP.equals(request.getProtocol())) {
            send(Packets.dialFailure(random, "protocol \"" + request.getProtocol()
                    + "\" not supported (expected: tcp)"));
            return;
        }
        if (table.byRandom(random) != null) {
            malformed("duplicate_dial", "DIAL_REQ random=" + random + " is already in progress");
            return;
        }
        if (dialsInFlight >= config.maxDialsInFlight()) {
            metrics.dialFailed(DialFailure.Reason.UNKNOWN.label());
            if (!dialCapLogged) {
                dialCapLogged = true;
                log.warn("too many dials in flight; refusing further DIAL_REQs until some finish serverID={} limit={}"
                        + " (--max-dials-in-flight; further refusals are logged at DEBUG)", serverId,
                        config.maxDialsInFlight());
            } else {
                log.debug("refusing DIAL_REQ: too many dials in flight dialID={} address={} serverID={}", random,
                        address, serverId);
            }
            send(Packets.dialFailure(random, "dial tcp " + address + ": too many dials in flight ("
                    + config.maxDialsInFlight() + " on this server connection)"));
            return;
        }
        long connectId = resources.connectionIds().next();
        Instant startedAt = resources.clock().instant();
        long startNanos = System.nanoTime();
        EndpointConnection connection = new EndpointConnection(connectId, random, address, startedAt, this,
                serverWindow, creditMode ? new ReceiveWindow(config.flowControlWindow(), MAX_DATA_PAYLOAD) : null);
        table.add(connection);
        Future<Channel> dial;
        try {
            dial = resources.dialer().dial(loop, address, new EndpointRelayHandler(connection));
        } catch (RuntimeException e) {
            connection.streamLost(); // leaves the table; packetFailed answers the DIAL_REQ
            throw e;
        }
        dialsInFlight++;
        connection.dialing(dial);
        dial.addListener(f -> {
            dialsInFlight--;
            if (f.isSuccess()) {
                if (!connection.dialed(dial.getNow())) {
                    return; // cancelled by DIAL_CLS or stream loss meanwhile
                }
                metrics.dialSucceeded(Duration.ofNanos(System.nanoTime() - startNanos));
                metrics.endpointOpened();
                send(Packets.dialResponse(random, connectId));
                dialLog(3).addKeyValue("dialID", random).addKeyValue("connectionID", connectId)
                        .addKeyValue("dialAddress", address).log("Endpoint connection established");
                connection.startReading();
            } else if (connection.state() == EndpointConnection.State.DIALING && !f.isCancelled()) {
                connection.streamLost();
                String error;
                if (f.cause() instanceof DialFailure failure) {
                    error = failure.getMessage();
                    if (failure.reason() == DialFailure.Reason.DENIED) {
                        metrics.dialDenied(failure.rule());
                    } else {
                        metrics.dialFailed(failure.reason().label());
                    }
                } else {
                    error = "dial tcp " + address + ": " + f.cause();
                    metrics.dialFailed(DialFailure.Reason.UNKNOWN.label());
                }
                dialLog(1).addKeyValue("error", error).addKeyValue("dialID", random)
                        .addKeyValue("connectionID", connectId).addKeyValue("dialAddress", address)
                        .log("error dialing backend");
                if (!callDone) {
                    send(Packets.dialFailure(random, error));
                }
            }
        });
    }

    private void onData(Data data) {
        long connectId = data.getConnectID();
        if (connectId == 0) {
            malformed("connect_id_0", "DATA for connectID 0");
            return;
        }
        EndpointConnection connection = table.get(connectId);
        if (connection == null) {
            metrics.malformed("unknown_connect_id");
            log.debug("DATA for unknown connectionID={} serverID={}; answering CLOSE_RSP", connectId, serverId);
            send(Packets.closeResponse(connectId, Packets.UNKNOWN_CONNECT_ID));
            return;
        }
        int size = data.getData().size();
        if (size > MAX_DATA_PAYLOAD) {
            malformed("oversized_data", "DATA of " + size + " bytes for connectionID=" + connectId + " (expected: <= "
                    + MAX_DATA_PAYLOAD + ")");
            connection.fail("DATA of " + size + " bytes exceeds " + MAX_DATA_PAYLOAD);
            return;
        }
        metrics.bytesToTarget(size);
        connection.write(data.getData());
    }

    private void onCloseRequest(long connectId) {
        EndpointConnection connection = table.get(connectId);
        if (connection == null) {
            log.debug("CLOSE_REQ for unknown connectionID={} serverID={}", connectId, serverId);
            send(Packets.closeResponse(connectId, Packets.UNKNOWN_CONNECT_ID));
            return;
        }
        Verbosity.v(log, 4).addKeyValue("connectionID", connectId).addKeyValue("serverID", serverId)
                .log("close connection");
        connection.closeRequested();
    }

    private void onDialClose(long random) {
        EndpointConnection connection = table.byRandom(random);
        if (connection != null) {
            log.debug("DIAL_CLS dialID={} connectionID={} state={}", random, connection.connectId(),
                    connection.state());
            connection.dialCancelled();
        }
    }

    private void onCredit(long connectId, long bytes) {
        EndpointConnection connection = table.get(connectId);
        if (connection != null) {
            connection.addCredit(bytes);
        }
    }

    // ---- EndpointConnection.TunnelPort (all on the loop) ----

    @Override
    public void sendData(EndpointConnection connection, ByteBuf data) {
        try {
            int size = data.readableBytes();
            // Zero-copy view of the socket buffer: grpc-netty serialises the message inside sendMessage, before
            // it returns, so the buffer can be released right after (retries are disabled on this channel, and
            // DATA is only sent after the stream delivered a message, so no DelayedStream can hold it).
            send(Packets.data(connection.connectId(), UnsafeByteOperations.unsafeWrap(data.nioBuffer())));
            metrics.bytesFromTarget(size);
        } finally {
            data.release();
        }
    }

    @Override
    public void sendCloseResponse(long connectId, String errorOrNull) {
        send(errorOrNull == null ? Packets.closeResponse(connectId) : Packets.closeResponse(connectId, errorOrNull));
    }

    @Override
    public void sendCredit(long connectId, long bytes) {
        send(Packets.credit(connectId, bytes));
    }

    @Override
    public boolean streamWritable() {
        return !callDone && !halfClosed && call.isReady();
    }

    @Override
    public void parkUntilWritable(EndpointConnection connection) {
        parked.add(connection);
    }

    @Override
    public void bufferFull(EndpointConnection connection, boolean full) {
        if (full) {
            if (fullBuffers.add(connection) && fullBuffers.size() == 1) {
                metrics.sharedStreamPaused();
                String message = "tunnel buffer full; pausing the server stream until it drains (the server does"
                        + " not speak the flow-control extension, so this is the only way to bound memory)"
                        + " connectionID={} address={} buffered={} serverID={}";
                if (!pauseLogged) {
                    pauseLogged = true;
                    log.warn(message, connection.connectId(), connection.address(), connection.bufferedToTarget(),
                            serverId);
                }
                Verbosity.v(log, 2).addKeyValue("connectionID", connection.connectId())
                        .addKeyValue("serverID", serverId).log("Data channel on agent is full");
            }
        } else if (fullBuffers.remove(connection) && fullBuffers.isEmpty()) {
            maybeRequest();
        }
    }

    @Override
    public void targetWriteStarted(int bytes) {
        targetBytes += bytes;
        budget.reserveAnyway(bytes);
    }

    @Override
    public void targetWriteDone(int bytes) {
        targetBytes -= bytes;
        budget.release(bytes);
        if (budgetPaused && targetBytes == 0) {
            maybeRequest(); // our own targets drained: request even if others fill the budget
        }
    }

    @Override
    public void closed(EndpointConnection connection) {
        table.remove(connection);
        if (connection.opened()) {
            metrics.endpointClosed();
        }
        ChannelFuture targetClosed = connection.targetCloseFuture();
        if (targetClosed != null && !targetClosed.isDone()) {
            // Still flushing what it owes the target (CLOSE_REQ): a graceful close waits for it, so the process
            // does not exit under it. The listener runs on this loop (the target is registered here).
            closingTargets++;
            targetClosed.addListener(f -> {
                closingTargets--;
                maybeHalfClose();
            });
        } else {
            maybeHalfClose();
        }
    }

    private void wakeParked() {
        int count = parked.size();
        for (int i = 0; i < count && !callDone && call.isReady(); i++) {
            parked.poll().onStreamWritable();
        }
    }

    private void send(Packet packet) {
        if (callDone || call == null) {
            return;
        }
        if (halfClosed) {
            log.debug("not sent after the half-close: {} serverID={}", Packets.describe(packet), serverId);
            return;
        }
        call.sendMessage(packet);
        if (call.isReady()) {
            sentWhileUnready = 0;
        } else {
            sentWhileUnready += packet.getSerializedSize();
        }
        metrics.packet(AgentMetrics.FROM_AGENT, Packets.typeName(packet));
    }

    private void setState(State next) {
        state = next;
        since = resources.clock().instant();
    }

    @Override
    public String toString() {
        return "TunnelClient{serverID=" + serverId + ", state=" + state + "}";
    }
}
