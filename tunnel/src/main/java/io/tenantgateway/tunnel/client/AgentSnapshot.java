package io.tenantgateway.tunnel.client;

import java.time.Instant;
import java.util.List;

/** The agent's tunnel state at one instant: server connections and open tunnels. */
public record AgentSnapshot(Instant takenAt, int serverCount, boolean draining,
        List<ServerConnectionSnapshot> servers, List<TunnelSnapshot> tunnels) {
    public AgentSnapshot {
        servers = List.copyOf(servers);
        tunnels = List.copyOf(tunnels);
    }
}
