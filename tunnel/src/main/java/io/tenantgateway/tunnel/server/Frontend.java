package io.tenantgateway.tunnel.server;

import io.netty.channel.EventLoop;
import io.tenantgateway.tunnel.proto.Packet;

/**
 * The client side of one tunnel (a ProxyService stream or an HTTP-CONNECT socket). Every method except
 * {@link #loop()} must be called on {@link #loop()}, which owns the client connection; the agent side hands
 * work over with {@code loop().execute(...)}.
 */
interface Frontend {
    EventLoop loop();

    /** The agent answered the dial with a connectID; {@code response} is its DIAL_RSP. */
    void dialSucceeded(ServerTunnel tunnel, Packet response);

    /** The dial failed (agent error, no agent, agent lost); {@code response} is the DIAL_RSP to forward. */
    void dialFailed(Packet response);

    /** DATA from the agent for this tunnel. */
    void deliver(Packet data);

    /**
     * The agent closed the tunnel (CLOSE_RSP, or the agent stream is gone): flush, tell the client, end.
     * {@code error} is the CLOSE_RSP error, {@code null} or empty for none.
     */
    void closedByAgent(String error);

    /** Credit or agent-stream readiness came back; read from the client again if parked. */
    void resumeReading();
}
