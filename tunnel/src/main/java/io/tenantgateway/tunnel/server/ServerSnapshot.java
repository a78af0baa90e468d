package io.tenantgateway.tunnel.server;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The server's state at one instant, for debug pages and tests.
 *
 * @param pendingDials dials forwarded to agents and not answered yet
 */
public record ServerSnapshot(Instant takenAt, String serverId, List<Agent> agents, List<Tunnel> tunnels,
        int pendingDials) {
    public ServerSnapshot {
        agents = List.copyOf(agents);
        tunnels = List.copyOf(tunnels);
    }

    /** One agent stream. */
    public record Agent(String agentId, String identifiers, boolean draining, boolean flowControl, Instant since,
            int tunnels) {
    }

    /**
     * One established tunnel; bytes are payload bytes as seen by the server.
     *
     * @param bufferedForClient bytes received from the agent that the client has not taken yet
     */
    public record Tunnel(long connectId, String agentId, String address, long bytesFromClient, long bytesToClient,
            long bufferedForClient, Duration age) {
    }
}
