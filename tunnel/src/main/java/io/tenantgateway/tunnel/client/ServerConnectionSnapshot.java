package io.tenantgateway.tunnel.client;

import java.time.Instant;

/**
 * One server connection, for debug endpoints.
 *
 * @param serverId the server's id from its headers (empty while connecting)
 * @param state CONNECTING, READY, DRAINING or CLOSED
 * @param since when the connection entered {@code state}
 * @param flowControl whether the server accepted the per-tunnel credit extension
 * @param tunnels open tunnels on this connection
 */
public record ServerConnectionSnapshot(String serverId, String state, Instant since, boolean flowControl,
        int tunnels) {
}
