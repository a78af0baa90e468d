package io.tenantgateway.tunnel.client;

import static java.util.Objects.requireNonNull;

import io.grpc.Status;

/**
 * How one server connection ended after {@link TunnelClient#closeGracefully}.
 *
 * @param tunnelsCut tunnels still open when the grace period ended (their clients lost data or the close)
 * @param streamCut whether the stream had to be cancelled after its half-close because the server did not end it
 *     in time (data still in transit may be lost)
 * @param status the stream's final status
 */
public record DrainResult(String serverId, int tunnelsCut, boolean streamCut, Status status) {
    public DrainResult {
        requireNonNull(serverId, "serverId");
        requireNonNull(status, "status");
    }

    /** No tunnel was cut and the server received everything we sent before it ended the stream. */
    public boolean lossless() {
        return tunnelsCut == 0 && !streamCut;
    }
}
