package io.tenantgateway.tunnel.client;

/** What a server told us in its response headers. */
public record ServerIdentity(String serverId, int serverCount, boolean flowControl) {
}
