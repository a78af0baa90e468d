package io.tenantgateway.tunnel.server;

import io.netty.buffer.ByteBuf;
import io.tenantgateway.tunnel.proto.Packet;
import io.tenantgateway.tunnel.protocol.ReceiveWindow;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An established tunnel on the server: one agent connection on one side, one frontend on the other. The two
 * sides usually live on different event loops, so the state is split: fields marked "agent loop" or "frontend
 * loop" are confined to that loop; the atomics are the hand-over points.
 *
 * <p>Frontend → agent: the frontend reads the next client message only while {@link #frontendMayRead()}: the
 * agent granted credit (extension), the agent stream is ready, and little is in transit between the loops.
 * Otherwise it parks ({@link #parkUnlessReadable()}) and is woken by the agent loop. Agent → frontend: DATA is
 * queued on the frontend loop; with the extension our receive window bounds that queue and credit is granted as
 * the frontend passes bytes on; without it (an upstream agent) the agent stream pauses while a queue is over
 * the limit.
 */
final class ServerTunnel {
    /** Bytes handed from the frontend loop to the agent loop and not yet written to the agent stream. */
    private static final long IN_TRANSIT_LIMIT = 512 * 1024;

    final long connectId;
    final long random;
    final String address;
    final AgentConnection agent;
    final Frontend frontend;
    final Instant openedAt;
    final boolean creditMode;
    private final long fullThreshold;

    // frontend -> agent
    private final AtomicLong sendCredit;
    private final AtomicLong inTransitToAgent = new AtomicLong();
    private volatile boolean frontendParked;
    private final AtomicBoolean wakeScheduled = new AtomicBoolean();
    private final AtomicBoolean closeRequested = new AtomicBoolean();

    // agent -> frontend
    private final AtomicLong queuedForFrontend = new AtomicLong();
    private final ReceiveWindow receiveWindow; // frontend loop
    private volatile boolean markedFull; // written on the agent loop

    volatile long bytesFromClient;
    volatile long bytesToClient;

    ServerTunnel(long connectId, long random, String address, AgentConnection agent, Frontend frontend,
            Instant openedAt, long agentWindow, int ourWindow, long fullThreshold) {
        this.connectId = connectId;
        this.random = random;
        this.address = address;
        this.agent = agent;
        this.frontend = frontend;
        this.openedAt = openedAt;
        this.creditMode = agentWindow > 0;
        this.sendCredit = new AtomicLong(creditMode ? agentWindow : Long.MAX_VALUE);
        this.receiveWindow = creditMode ? new ReceiveWindow(ourWindow, AgentConnection.MAX_INBOUND_MESSAGE) : null;
        this.fullThreshold = fullThreshold;
    }

    /** Bytes from the agent not yet passed to the client (any thread; for snapshots). */
    long bufferedForClient() {
        return queuedForFrontend.get();
    }

    // ---- frontend loop ----

    boolean frontendMayRead() {
        return sendCredit.get() > 0 && agent.writable() && inTransitToAgent.get() < IN_TRANSIT_LIMIT
                && !closeRequested.get();
    }

    /** True when the frontend may read now; otherwise parks it until the agent loop calls resumeReading. */
    boolean parkUnlessReadable() {
        if (frontendMayRead()) {
            return true;
        }
        frontendParked = true;
        // Re-check after publishing the flag: the agent loop changes state first and reads the flag second, so
        // one of us sees the other and no wake-up is lost.
        if (frontendMayRead()) {
            frontendParked = false;
            return true;
        }
        return false;
    }

    /** Called by the frontend when it resumes; true if it may read again. */
    boolean unparkIfReadable() {
        if (frontendParked && frontendMayRead()) {
            frontendParked = false;
            return true;
        }
        return false;
    }

    /** Client DATA (already a packet, forwarded unchanged). */
    void toAgent(Packet data) {
        int size = data.getData().getData().size();
        beforeTransit(size);
        if (!agent.execute(() -> {
            agent.send(data);
            afterTransit(size);
        })) {
            afterTransit(size);
        }
    }

    /** Client bytes from a socket; the buffer is released once serialised on the agent loop. */
    void toAgent(ByteBuf bytes) {
        int size = bytes.readableBytes();
        beforeTransit(size);
        if (!agent.execute(() -> {
            try {
                agent.sendData(connectId, bytes);
            } finally {
                bytes.release();
            }
            afterTransit(size);
        })) {
            bytes.release();
            afterTransit(size);
        }
    }

    private void beforeTransit(int size) {
        bytesFromClient += size;
        if (creditMode) {
            sendCredit.addAndGet(-size);
        }
        inTransitToAgent.addAndGet(size);
    }

    /** The client is done (CLOSE_REQ, half-close, cancel, socket closed): ask the agent to close. */
    void closeFromFrontend() {
        if (closeRequested.compareAndSet(false, true)) {
            agent.execute(() -> agent.sendCloseRequest(connectId));
        }
    }

    /**
     * Accounts DATA that arrived on the frontend loop; {@code false} when the agent overran the window (the
     * caller closes the tunnel).
     */
    boolean received(int size) {
        return receiveWindow == null || receiveWindow.onReceived(size);
    }

    /** {@code size} bytes of agent DATA were passed to the client (or dropped because it is gone). */
    void deliveredToClient(int size) {
        bytesToClient += size;
        long queued = queuedForFrontend.addAndGet(-size);
        if (creditMode) {
            long grant = receiveWindow.onConsumed(size);
            if (grant > 0 && !closeRequested.get()) {
                agent.execute(() -> agent.sendCredit(connectId, grant));
            }
        } else if (markedFull && queued < fullThreshold / 2) {
            agent.execute(this::unmarkFullIfDrained);
        }
    }

    // ---- agent loop ----

    /** DATA from the agent: hand it to the frontend loop. */
    void fromAgent(Packet data) {
        int size = data.getData().getData().size();
        long queued = queuedForFrontend.addAndGet(size);
        if (!creditMode && !markedFull && queued > fullThreshold) {
            markedFull = true;
            agent.bufferFull(this, true);
        }
        try {
            frontend.loop().execute(() -> frontend.deliver(data));
        } catch (RejectedExecutionException e) {
            queuedForFrontend.addAndGet(-size);
        }
    }

    void creditFromAgent(long bytes) {
        if (creditMode) {
            // Saturating: an agent granting absurd credit must not wrap it negative (a stalled tunnel for good).
            sendCredit.accumulateAndGet(bytes, (credit, more) -> {
                long sum = credit + more;
                return more > 0 && sum < credit ? Long.MAX_VALUE : sum;
            });
            wakeFrontend();
        }
    }

    /** The agent stream turned ready. */
    void agentWritable() {
        wakeFrontend();
    }

    private void afterTransit(int size) {
        inTransitToAgent.addAndGet(-size);
        wakeFrontend();
    }

    private void unmarkFullIfDrained() {
        if (markedFull && queuedForFrontend.get() < fullThreshold / 2) {
            markedFull = false;
            agent.bufferFull(this, false);
        }
    }

    /** Called when the tunnel leaves the agent's table, so a paused agent stream is not held by it. */
    void released() {
        if (markedFull) {
            markedFull = false;
            agent.bufferFull(this, false);
        }
    }

    private void wakeFrontend() {
        if (frontendParked && wakeScheduled.compareAndSet(false, true)) {
            try {
                frontend.loop().execute(() -> {
                    wakeScheduled.set(false);
                    frontend.resumeReading();
                });
            } catch (RejectedExecutionException e) {
                wakeScheduled.set(false);
            }
        }
    }
}
