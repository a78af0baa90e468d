package io.tenantgateway.tunnel.client;

import java.time.Duration;

/**
 * One tunnelled connection, for debug endpoints.
 *
 * @param bufferedToTarget bytes received from the server that the target has not taken yet
 */
public record TunnelSnapshot(long connectId, String serverId, String address, long bytesToTarget,
        long bytesFromTarget, long bufferedToTarget, Duration age) {
}
