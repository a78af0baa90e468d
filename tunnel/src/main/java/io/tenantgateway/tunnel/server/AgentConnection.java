package io.tenantgateway.tunnel.server;

import static io.tenantgateway.tunnel.transport.GrpcHeaders.key;

import com.google.protobuf.UnsafeByteOperations;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.tenantgateway.tunnel.proto.DialResponse;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.protocol.FlowControlOffer;
import io.tenantgateway.tunnel.protocol.Headers;
import io.tenantgateway.tunnel.protocol.Packets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of one agent's {@code /AgentService/Connect} stream. Confined to the event loop of the agent's
 * transport (gRPC callbacks run there directly); frontends hand work over with {@link #execute}.
 */
final class AgentConnection extends ServerCall.Listener<Packet> {
    private static final Logger log = LoggerFactory.getLogger(AgentConnection.class);
    static final int MAX_INBOUND_MESSAGE = 16 * 1024 * 1024;
    private static final int INBOUND_MESSAGES = 8;

    final String agentId;
    final AgentIdentifiers identifiers;
    final EventLoop loop;
    final Instant since;
    private final ServerCall<Packet, Packet> call;
    private final AgentRegistry registry;
    private final Clock clock;
    private final int ourWindow;
    private final long agentWindow;
    /** Without the extension: bytes queued towards one slow client before the agent stream pauses. */
    private final long plainTunnelLimit;
    private final Map<Long, ServerTunnel> tunnels = new ConcurrentHashMap<>();
    private final Set<ServerTunnel> fullBuffers = new HashSet<>();
    private int owedRequests;
    private boolean accepted;
    private volatile boolean done;
    private volatile boolean draining;
    private volatile boolean writable = true;

    /**
     * @param agentOffer the agent's flow-control offer, or {@code null} when it made none (or we decline)
     */
    AgentConnection(ServerCall<Packet, Packet> call, EventLoop loop, String agentId, AgentIdentifiers identifiers,
            AgentRegistry registry, Clock clock, FlowControlOffer agentOffer, int ourWindow, long plainTunnelLimit) {
        this.call = call;
        this.loop = loop;
        this.agentId = agentId;
        this.identifiers = identifiers;
        this.registry = registry;
        this.clock = clock;
        this.since = clock.instant();
        this.ourWindow = ourWindow;
        this.agentWindow = agentOffer == null ? 0 : agentOffer.window();
        this.plainTunnelLimit = plainTunnelLimit;
    }

    boolean creditMode() {
        return agentWindow > 0;
    }

    boolean draining() {
        return draining;
    }

    boolean writable() {
        return writable;
    }

    boolean isDone() {
        return done;
    }

    Map<Long, ServerTunnel> tunnels() {
        return tunnels;
    }

    /** Runs {@code task} on this connection's loop; false if the loop is gone (the task did not run). */
    boolean execute(Runnable task) {
        try {
            loop.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Authentication passed: send the response headers and start reading. On the loop. */
    void accept(String serverId, int serverCount) {
        if (done) {
            return;
        }
        Metadata headers = new Metadata();
        headers.put(key(Headers.SERVER_ID), serverId);
        headers.put(key(Headers.SERVER_COUNT), Integer.toString(serverCount));
        if (creditMode()) {
            headers.put(key(Headers.FLOW_CONTROL), FlowControlOffer.v1(ourWindow).format());
        }
        call.sendHeaders(headers);
        accepted = true;
        registry.add(this);
        writable = call.isReady();
        call.request(INBOUND_MESSAGES);
        log.info("agent connected agentID={} identifiers=\"{}\" flowControl={}", agentId, identifiers.encode(),
                creditMode());
    }

    /** Rejects the stream before any header was sent (auth failure). On the loop. */
    void reject(Status status) {
        if (!done) {
            done = true;
            log.info("agent rejected agentID={} status={} description=\"{}\"", agentId, status.getCode(),
                    status.getDescription());
            call.close(status, new Metadata());
        }
    }

    // ---- sending (on the loop) ----

    void send(Packet packet) {
        if (!done) {
            call.sendMessage(packet);
            if (writable && !call.isReady()) {
                writable = false; // frontends park; onReady wakes them
            }
        }
    }

    void sendData(long connectId, ByteBuf bytes) {
        // Serialised inside sendMessage, so the view does not outlive the buffer (released by the caller).
        send(Packets.data(connectId, UnsafeByteOperations.unsafeWrap(bytes.nioBuffer())));
    }

    void sendCloseRequest(long connectId) {
        send(Packets.closeRequest(connectId));
    }

    void sendCredit(long connectId, long bytes) {
        if (tunnels.containsKey(connectId)) {
            send(Packets.credit(connectId, bytes));
        }
    }

    /** Forwards a client's DIAL_REQ; the dial is already registered as pending. */
    void sendDialRequest(Packet dialRequest) {
        if (done) {
            PendingDial pending = registry.takePending(dialRequest.getDialRequest().getRandom());
            if (pending != null) {
                failDial(pending, "agent disconnected");
            }
            return;
        }
        send(dialRequest);
    }

    void sendDialClose(long random) {
        send(Packets.closeDial(random));
    }

    // ---- stream events (on the loop) ----

    @Override
    public void onMessage(Packet packet) {
        try {
            handle(packet);
        } finally {
            if (!done) {
                if (fullBuffers.isEmpty()) {
                    call.request(1);
                } else {
                    owedRequests++;
                }
            }
        }
    }

    private void handle(Packet packet) {
        Packets.Malformation problem = Packets.check(packet, creditMode());
        if (problem != null) {
            log.warn("ignoring malformed packet from agent agentID={} reason={} detail=\"{}\"", agentId,
                    problem.reason(), problem.message());
            return;
        }
        switch (packet.getType()) {
            case DIAL_RSP -> onDialResponse(packet);
            case DATA -> onData(packet);
            case CLOSE_RSP -> onCloseResponse(packet.getCloseResponse().getConnectID(),
                    packet.getCloseResponse().getError());
            case DRAIN -> {
                if (!draining) {
                    draining = true;
                    log.info("agent draining agentID={}; no new dials are routed to it", agentId);
                }
            }
            case TG_CREDIT -> {
                ServerTunnel tunnel = tunnels.get(packet.getTgCredit().getConnectID());
                if (tunnel != null) {
                    tunnel.creditFromAgent(packet.getTgCredit().getBytes());
                }
            }
            default -> log.warn("ignoring {} from agent agentID={} (not sent by agents)", Packets.typeName(packet),
                    agentId);
        }
    }

    private void onDialResponse(Packet packet) {
        DialResponse response = packet.getDialResponse();
        PendingDial pending = registry.takePendingFor(response.getRandom(), this);
        if (pending == null) {
            log.debug("DIAL_RSP for unknown dialID={} agentID={} connectionID={}", response.getRandom(), agentId,
                    response.getConnectID());
            if (response.getConnectID() != 0) {
                sendCloseRequest(response.getConnectID());
            }
            return;
        }
        if (!response.getError().isEmpty() || response.getConnectID() == 0) {
            dispatch(pending.frontend(), () -> pending.frontend().dialFailed(packet));
            return;
        }
        ServerTunnel tunnel = new ServerTunnel(response.getConnectID(), response.getRandom(), pending.address(),
                this, pending.frontend(), clock.instant(), agentWindow, ourWindow, plainTunnelLimit);
        tunnels.put(tunnel.connectId, tunnel);
        log.debug("tunnel established connectionID={} dialID={} agentID={} address={}", tunnel.connectId,
                tunnel.random, agentId, tunnel.address);
        if (!dispatch(pending.frontend(), () -> pending.frontend().dialSucceeded(tunnel, packet))) {
            removeTunnel(tunnel.connectId);
            sendCloseRequest(tunnel.connectId);
        }
    }

    private void onData(Packet packet) {
        long connectId = packet.getData().getConnectID();
        ServerTunnel tunnel = tunnels.get(connectId);
        if (tunnel == null) {
            log.debug("DATA for unknown connectionID={} agentID={}; sending CLOSE_REQ", connectId, agentId);
            sendCloseRequest(connectId);
            return;
        }
        tunnel.fromAgent(packet);
    }

    private void onCloseResponse(long connectId, String error) {
        ServerTunnel tunnel = removeTunnel(connectId);
        if (tunnel != null) {
            log.debug("tunnel closed by agent connectionID={} agentID={} error=\"{}\"", connectId, agentId, error);
            dispatch(tunnel.frontend, () -> tunnel.frontend.closedByAgent(error));
        }
    }

    @Override
    public void onReady() {
        writable = call.isReady();
        if (writable) {
            tunnels.values().forEach(ServerTunnel::agentWritable);
        }
    }

    /**
     * The agent is done sending (a draining agent half-closes once its tunnels are closed). gRPC delivers this only
     * after every message received before it, and those were handled in order (DATA handed to the frontends'
     * loops, CLOSE_RSP passed on), so what is left are tunnels the agent no longer serves: they get a CLOSE_RSP
     * without error, queued behind their DATA, as the Go server does when its receive loop sees io.EOF. Then the
     * stream ends with OK, which tells the agent that everything it sent was processed.
     */
    @Override
    public void onHalfClose() {
        if (!done) {
            call.close(Status.OK, new Metadata());
        }
        lost("agent half-closed the stream", null);
    }

    @Override
    public void onCancel() {
        lost("agent stream cancelled", "agent disconnected");
    }

    @Override
    public void onComplete() {
        lost("agent stream completed", "agent disconnected");
    }

    /** Closes the stream from our side (server shutdown). On the loop. */
    void shutdown(String reason) {
        if (!done) {
            call.close(Status.UNAVAILABLE.withDescription(reason), new Metadata());
        }
        lost(reason, "agent disconnected");
    }

    /** @param tunnelError the CLOSE_RSP error for tunnels still open, or {@code null} for none */
    private void lost(String reason, String tunnelError) {
        boolean first = !done;
        done = true;
        writable = false;
        registry.remove(this);
        for (PendingDial pending : registry.takeAllPendingFor(this)) {
            failDial(pending, "agent disconnected");
        }
        for (ServerTunnel tunnel : new ArrayList<>(tunnels.values())) {
            removeTunnel(tunnel.connectId);
            dispatch(tunnel.frontend, () -> tunnel.frontend.closedByAgent(tunnelError));
        }
        if (first && accepted) {
            log.info("agent disconnected agentID={} reason=\"{}\"", agentId, reason);
        }
    }

    private void failDial(PendingDial pending, String error) {
        dispatch(pending.frontend(), () -> pending.frontend().dialFailed(Packets.dialFailure(pending.random(),
                error)));
    }

    void bufferFull(ServerTunnel tunnel, boolean full) {
        if (full) {
            if (fullBuffers.add(tunnel) && fullBuffers.size() == 1) {
                log.warn("client of connectionID={} is not reading; pausing agent stream agentID={} (agent without"
                        + " the flow-control extension)", tunnel.connectId, agentId);
            }
        } else if (fullBuffers.remove(tunnel) && fullBuffers.isEmpty() && owedRequests > 0 && !done) {
            int owed = owedRequests;
            owedRequests = 0;
            call.request(owed);
        }
    }

    private ServerTunnel removeTunnel(long connectId) {
        ServerTunnel tunnel = tunnels.remove(connectId);
        if (tunnel != null) {
            tunnel.released();
        }
        return tunnel;
    }

    private static boolean dispatch(Frontend frontend, Runnable task) {
        try {
            frontend.loop().execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }
}
